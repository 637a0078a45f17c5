"""Review 5: an Alertmanager receiver's secret in the shape Alertmanager takes, checked before the Secret
registers, never printed.

A webhook or Slack URL that is not a URL rendered a configuration `amtool check-config` refuses: the
operator keeps no valid configuration and no alert reaches anyone. A secret known at plan time is
refused by GpuObservability's validation; one known only at deploy is refused when its value arrives,
before the Secret registers.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s import GpuObservabilityArgs
from inference_infra.components.k8s.observability_args import AlertReceiver, validate_gpu_observability
from inference_infra.components.monitoring.alertmanager import (
    Receiver,
    ReceiverKind,
    render_alertmanager_yaml,
)

GOOD = {
    ReceiverKind.WEBHOOK: "https://hooks.example.com/alerts?token=abc",
    ReceiverKind.SLACK: "https://hooks.slack.com/services/T000/B000/XXXX",
    ReceiverKind.PAGERDUTY: "0123456789abcdef0123456789abcdef",
}
BAD = [
    (ReceiverKind.WEBHOOK, "not a url"),
    (ReceiverKind.WEBHOOK, "https://hooks.example.com/a b"),
    (ReceiverKind.SLACK, "hooks.slack.com/services/T000"),
    (ReceiverKind.SLACK, "https://hooks.slack.com/services/T000\n"),
    (ReceiverKind.PAGERDUTY, "0123456789abcdef0123456789abcdef\n"),
    (ReceiverKind.PAGERDUTY, ""),
]


def _receiver(kind: ReceiverKind) -> Receiver:
    return Receiver(name="oncall", kind=kind, channel="#gpu" if kind is ReceiverKind.SLACK else None)


def _amtool(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    amtool = shutil.which("amtool")
    assert amtool, "amtool is not installed (Debian package prometheus-alertmanager)"
    path = tmp_path / "alertmanager.yml"
    path.write_text(text)
    return subprocess.run([amtool, "check-config", str(path)], capture_output=True, text=True)


@pytest.mark.parametrize(("kind", "secret"), [case for case in BAD if case[1]])
def test_gpu_observability_rejects_a_receiver_secret_alertmanager_cannot_use(kind, secret):
    receiver = AlertReceiver(
        name="oncall", kind=kind, secret=secret, channel="#gpu" if kind == "slack" else None
    )
    problems = validate_gpu_observability("obs", GpuObservabilityArgs(alert_receivers=[receiver]))
    assert [p.input for p in problems] == ["alert_receivers[0].secret"]
    assert secret not in str(problems[0])  # the secret is never printed


@pytest.mark.parametrize(("kind", "secret"), BAD)
def test_render_alertmanager_yaml_rejects_a_secret_arriving_at_deploy(kind, secret):
    with pytest.raises(InputError, match=r"alert_receivers\[0\]\.secret '\[secret\]'"):
        render_alertmanager_yaml([_receiver(kind)], [secret])


def test_webhook_that_is_not_a_url_is_what_amtool_refuses(tmp_path):
    # Why: the configuration rendered without the check is one Alertmanager refuses whole.
    from inference_infra.components.monitoring.alertmanager import alertmanager_config
    from inference_infra.components.monitoring.rules import dump_yaml

    done = _amtool(tmp_path, dump_yaml(alertmanager_config([_receiver(ReceiverKind.WEBHOOK)], ["not a url"])))
    assert done.returncode != 0


@pytest.mark.parametrize("kind", list(GOOD))
def test_accepted_receiver_secrets_pass_amtool(kind, tmp_path):
    assert (
        validate_gpu_observability(
            "obs",
            GpuObservabilityArgs(
                alert_receivers=[AlertReceiver(name="oncall", kind=kind, secret=GOOD[kind])]
            ),
        )
        == []
    )
    done = _amtool(tmp_path, render_alertmanager_yaml([_receiver(kind)], [GOOD[kind]]))
    assert done.returncode == 0, done.stdout + done.stderr


def test_render_alertmanager_yaml_leaves_stand_in_secrets_to_the_deploy():
    # A preview's secrets may be stand-ins (the offline plan's placeholder): the component renders them
    # unchecked there and checks at `pulumi up` (check_secrets=not is_dry_run()).
    text = render_alertmanager_yaml(
        [_receiver(ReceiverKind.SLACK)], ["offline-plan-secret-placeholder"], check_secrets=False
    )
    assert "offline-plan-secret-placeholder" in text


def test_gpu_observability_leaves_a_blank_secret_to_the_deploy():
    # The reference stack validates its section with blank secrets (their values come at deploy).
    receiver = AlertReceiver(name="oncall", kind=ReceiverKind.PAGERDUTY, secret="")
    assert validate_gpu_observability("obs", GpuObservabilityArgs(alert_receivers=[receiver])) == []
