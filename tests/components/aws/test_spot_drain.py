"""SpotDrain under Pulumi's mock runtime: what the engine would receive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inference_infra.components.aws import SpotDrain, SpotDrainArgs
from inference_infra.components.aws.spot_drain import EVENT_PATTERN, HANDLER, LAMBDA_DIR, lambda_archive
from inference_infra.components.errors import InputError
from inference_infra.lambdas.spot_drain.settings import Settings

FUNCTION = "aws:lambda/function:Function"
POLICY = "aws:iam/rolePolicy:RolePolicy"
SCOPE = {"CostCenter": "ml-platform", "Environment": "dev"}


def statements(policy_json: str) -> dict[str, dict]:
    return {s["Sid"]: s for s in json.loads(policy_json)["Statement"]}


def test_spot_drain_rule_matches_both_ec2_spot_signals(plan_of):
    SpotDrain("drain", SpotDrainArgs(scope_tags=SCOPE))
    capture = plan_of()
    rule = capture.one("aws:cloudwatch/eventRule:EventRule", "drain-rule")
    assert (
        json.loads(rule.props["eventPattern"])
        == EVENT_PATTERN
        == {
            "source": ["aws.ec2"],
            "detail-type": [
                "EC2 Spot Instance Interruption Warning",
                "EC2 Instance Rebalance Recommendation",
            ],
        }
    )
    target = capture.one("aws:cloudwatch/eventTarget:EventTarget", "drain-target")
    assert target.props["retryPolicy"] == {"maximumEventAgeInSeconds": 120, "maximumRetryAttempts": 3}
    permission = capture.one("aws:lambda/permission:Permission", "drain-invoke")
    assert (permission.props["principal"], permission.props["action"]) == (
        "events.amazonaws.com",
        "lambda:InvokeFunction",
    )
    assert "drain-rule" in permission.props["sourceArn"]
    # A Spot instance stopped on interruption, running again, is put back (issue #38 item 4).
    restart = capture.one("aws:cloudwatch/eventRule:EventRule", "drain-restarted")
    assert json.loads(restart.props["eventPattern"]) == {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
        "detail": {"state": ["running"]},
    }
    assert (
        "drain-restarted"
        in capture.one("aws:lambda/permission:Permission", "drain-restarted-invoke").props["sourceArn"]
    )


def test_spot_drain_changes_only_resources_carrying_the_scope_tags(plan_of):
    SpotDrain("drain", SpotDrainArgs(scope_tags=SCOPE))
    policy = statements(plan_of().one(POLICY).props["policy"])
    condition = {
        "StringEquals": {"aws:ResourceTag/CostCenter": "ml-platform", "aws:ResourceTag/Environment": "dev"}
    }
    assert policy["DeregisterFromStackTargetGroups"]["Action"] == "elasticloadbalancing:DeregisterTargets"
    assert policy["DeregisterFromStackTargetGroups"]["Condition"] == condition
    assert policy["DeregisterFromStackTargetGroups"]["Resource"].endswith(":targetgroup/*/*")
    assert policy["ReplaceInStackGroups"]["Action"] == [
        "autoscaling:DetachInstances",
        "autoscaling:SetInstanceHealth",
    ]
    assert policy["ReplaceInStackGroups"]["Condition"] == condition
    writes = [s for s in policy.values() if s["Resource"] == "*"]
    assert {a for s in writes for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])} <= {
        "autoscaling:DescribeAutoScalingInstances",
        "autoscaling:DescribeAutoScalingGroups",
        "elasticloadbalancing:DescribeTargetGroups",
        "elasticloadbalancing:DescribeTargetHealth",
        "ec2:DescribeInstances",
        "elasticloadbalancing:DescribeTags",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


def test_spot_drain_function_environment_reproduces_its_settings(plan_of):
    SpotDrain("drain", SpotDrainArgs(scope_tags=SCOPE, dry_run=True))
    function = plan_of().one(FUNCTION).props
    assert function["handler"] == HANDLER == "spot_drain.handler.handler"
    settings = Settings.from_env(function["environment"]["variables"])
    assert settings == Settings(scope_tags=SCOPE, dry_run=True)
    assert function["timeout"] == 60
    assert function["tracingConfig"] == {"mode": "Active"}
    # Held and capped: a burst elsewhere cannot starve the drain, a flood cannot run it without bound.
    assert function["reservedConcurrentExecutions"] == 20


def test_spot_drain_package_runs_alone(tmp_path):
    for name, asset in lambda_archive().assets.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(Path(asset.path).read_text())
    assert {p.name for p in (tmp_path / "spot_drain").glob("*.py")} == {
        p.name for p in LAMBDA_DIR.glob("*.py")
    }
    probe = (
        "import sys, spot_drain.handler as h\n"
        "assert h.__file__.startswith(sys.argv[1]), h.__file__\n"
        "ours = ('components', 'lambdas', 'inference_infra')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ours))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"scope_tags": {}}, "scope_tags"),
        ({"scope_tags": {"aws:cloudformation:stack-name": "x"}}, "not starting with 'aws:'"),
        ({"timeout_seconds": 300}, r"timeout_seconds 300 must be 10\.\.120"),
        ({"timeout_seconds": 5}, "timeout_seconds 5 must be at least 10"),
        ({"timeout_seconds": 30.5}, "timeout_seconds 30.5 must be"),
        ({"log_retention_days": 2}, "log_retention_days"),
        ({"kms_key": "alias/mine"}, "kms_key"),
    ],
)
def test_spot_drain_rejects_bad_inputs_before_registering_anything(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        SpotDrain("drain", SpotDrainArgs(**{"scope_tags": SCOPE, **overrides}))
    assert plan_of().custom == []


def test_spot_drain_children_are_named_after_the_instance(plan_of):
    SpotDrain("a", SpotDrainArgs(scope_tags=SCOPE))
    SpotDrain("b", SpotDrainArgs(scope_tags=SCOPE))
    capture = plan_of()
    for component in capture.of_type("inference-infra:aws:SpotDrain"):
        children = capture.children(component)
        assert len(children) == 13  # + the restart rule, its target and permission (issue #38)
        assert all(c.name.startswith(f"{component.name}-") for c in children)
