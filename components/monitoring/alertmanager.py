"""Alertmanager configuration: where the GPU alerts go.

Receivers are described here without their secrets (a Slack webhook URL, a
PagerDuty Events v2 routing key, a generic webhook URL); the secret values are
passed in only when the file is rendered, so callers can keep them inside a
Pulumi secret from config to Kubernetes Secret.

Routing: every receiver gets the alerts of the severities it lists (an alert
may go to several); kube-prometheus-stack's always-firing `Watchdog` and its
`InfoInhibitor` go nowhere; a critical alert silences the warnings of the same
alert on the same node.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from inference_infra.components.errors import Problem, raise_if_invalid

SEVERITIES = ("critical", "warning", "info")
NULL_RECEIVER = "null"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SLACK_CHANNEL = re.compile(r"^[#@][\w.-]{1,80}$")


class ReceiverKind(StrEnum):
    SLACK = "slack"  # secret: the incoming-webhook URL
    PAGERDUTY = "pagerduty"  # secret: the Events API v2 integration (routing) key
    WEBHOOK = "webhook"  # secret: the URL (it often embeds a token)


@dataclass(frozen=True, kw_only=True)
class Receiver:
    name: str
    kind: ReceiverKind
    channel: str | None = None  # Slack only; None: the webhook's own channel
    severities: Sequence[str] = ("critical", "warning")


def validate_receivers(receivers: Sequence[Receiver], where: str = "alert_receivers") -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, r in enumerate(receivers):
        at = f"{where}[{i}]"
        if not _NAME.fullmatch(r.name) or r.name == NULL_RECEIVER:
            problems.append(
                Problem(f"{at}.name", r.name, "must be 1-63 of letters, digits, '_', '.', '-' and not 'null'")
            )
        if r.name in seen:
            problems.append(Problem(f"{at}.name", r.name, "is used by another receiver"))
        seen.add(r.name)
        if not isinstance(r.kind, ReceiverKind):
            problems.append(Problem(f"{at}.kind", r.kind, f"must be one of {', '.join(ReceiverKind)}"))
        if r.channel is not None and r.kind is not ReceiverKind.SLACK:
            problems.append(Problem(f"{at}.channel", r.channel, "is for Slack receivers only"))
        if r.channel is not None and not _SLACK_CHANNEL.fullmatch(r.channel):
            problems.append(Problem(f"{at}.channel", r.channel, "must look like '#channel' or '@user'"))
        bad = [s for s in r.severities if s not in SEVERITIES]
        if bad or not r.severities:
            problems.append(
                Problem(
                    f"{at}.severities", list(r.severities), f"must be one or more of {', '.join(SEVERITIES)}"
                )
            )
    return problems


# What Alertmanager takes for each receiver's secret: `amtool check-config` refuses a webhook or Slack
# `url`/`api_url` that is not a URL (checked with amtool 0.25, Debian's prometheus-alertmanager,
# 2026-12-02), and a key pasted with a newline or a space is accepted by the config but refused by the
# service at the first alert. Alertmanager refusing its configuration means no alert reaches anyone.
_SECRET_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[!-~]*)?")
_SECRET_KEY = re.compile(r"[!-~]{1,256}")


def secret_problems(
    receivers: Sequence[Receiver], secrets: Sequence[object], where: str = "alert_receivers"
) -> list[Problem]:
    """Each known (plain string) secret in the shape its receiver needs; the value is never printed."""
    problems = []
    for i, (r, secret) in enumerate(zip(receivers, secrets, strict=True)):
        if not isinstance(secret, str):
            continue  # an Output: checked when its value arrives (render_alertmanager_yaml)
        if r.kind is ReceiverKind.PAGERDUTY:
            if not _SECRET_KEY.fullmatch(secret):
                problems.append(
                    Problem(
                        f"{where}[{i}].secret",
                        "[secret]",
                        "must be the PagerDuty routing key: 1-256 printable characters, no spaces or "
                        "newlines",
                    )
                )
        elif not _SECRET_URL.fullmatch(secret):
            problems.append(
                Problem(
                    f"{where}[{i}].secret",
                    "[secret]",
                    f"must be the {r.kind.value} URL: http(s)://host[:port]/path without spaces or newlines "
                    "(Alertmanager refuses its whole configuration otherwise)",
                )
            )
    return problems


def alertmanager_config(receivers: Sequence[Receiver], secrets: Sequence[str]) -> dict[str, Any]:
    """The alertmanager.yaml content; secrets[i] belongs to receivers[i]."""
    if len(receivers) != len(secrets):
        raise ValueError(f"{len(receivers)} receivers but {len(secrets)} secrets")
    routes: list[dict[str, Any]] = [
        {"receiver": NULL_RECEIVER, "matchers": ['alertname =~ "Watchdog|InfoInhibitor"']},
    ]
    routes += [
        {"receiver": r.name, "matchers": [f'severity =~ "{"|".join(r.severities)}"'], "continue": True}
        for r in receivers
    ]
    return {
        "route": {
            "receiver": NULL_RECEIVER,
            "group_by": ["alertname", "node"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "4h",
            "routes": routes,
        },
        "inhibit_rules": [
            {
                "source_matchers": ['severity = "critical"'],
                "target_matchers": ['severity = "warning"'],
                "equal": ["alertname", "node"],
            }
        ],
        "receivers": [{"name": NULL_RECEIVER}]
        + [_receiver(r, s) for r, s in zip(receivers, secrets, strict=True)],
    }


def render_alertmanager_yaml(
    receivers: Sequence[Receiver], secrets: Sequence[str], *, check_secrets: bool = True
) -> str:
    """The configuration, after each secret's shape is checked (a secret known only at deploy arrives
    here: a bad one stops the Secret from registering, with a message that names the receiver).
    `check_secrets=False` where the values may be stand-ins (a preview, the offline plan)."""
    from inference_infra.components.monitoring.rules import dump_yaml

    if check_secrets:
        raise_if_invalid("alertmanager receivers", secret_problems(receivers, secrets))
    return dump_yaml(alertmanager_config(receivers, secrets))


_SLACK_TITLE = "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }} ({{ .Alerts | len }})"
_SLACK_TEXT = (
    "{{ range .Alerts }}*{{ .Annotations.summary }}*\n{{ .Annotations.description }}\n"
    "<{{ .Annotations.runbook_url }}|Runbook>\n{{ end }}"
)


def _receiver(r: Receiver, secret: str) -> dict[str, Any]:
    if r.kind is ReceiverKind.SLACK:
        slack: dict[str, Any] = {
            "api_url": secret,
            "send_resolved": True,
            "title": _SLACK_TITLE,
            "text": _SLACK_TEXT,
        }
        if r.channel:
            slack["channel"] = r.channel
        return {"name": r.name, "slack_configs": [slack]}
    if r.kind is ReceiverKind.PAGERDUTY:
        return {
            "name": r.name,
            "pagerduty_configs": [
                {
                    "routing_key": secret,
                    "send_resolved": True,
                    "description": "{{ .CommonAnnotations.summary }}",
                }
            ],
        }
    return {"name": r.name, "webhook_configs": [{"url": secret, "send_resolved": True}]}
