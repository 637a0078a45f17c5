"""Review 5: cost tags and a component's own AWS tags, in the characters every AWS service takes.

Found by planning programs written from the README: register_cost_tags accepted an Environment of
"dev*" or "dev\\nx", which the IAM role tags refuse at deploy and which the idle watchdog, scoped to the
registered Environment by default, rendered into a Lambda whose own settings reader refuses it (the
watchdog then fails on every run and stops nothing); a fleet's `tags` took 'aws:' keys and newlines.
"""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws import (
    GpuFleet,
    GpuFleetArgs,
    IdleGpuWatchdog,
    IdleGpuWatchdogArgs,
    SubnetRef,
)
from inference_infra.components.errors import InputError
from inference_infra.components.tagging import CostTags, register_cost_tags, validate_cost_tags
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

# Characters that break an AWS API call or a reader downstream: newline, shell substitution, backtick,
# '%', '*', quotes and '$' (IAM's TagRole value pattern is [\p{L}\p{Z}\p{N}_.:/=+\-@]*).
HOSTILE_TAG_VALUES = ["dev\nx", "$(reboot)", "a`id`", "50%", "dev*", 'say "hi"', "x;y", "tab\there"]
# What AWS's tag alphabet allows, unicode letters included.
FRIENDLY_TAG_VALUES = ["José Müller", "ml+team@example.com", "a/b:c=d", "team_1.eu-west", "Ärzte"]


def _tags(**overrides: str) -> CostTags:
    values = {"cost_center": "ml-platform", "environment": "dev", "owner": "ml@example.com", **overrides}
    return CostTags(auto_shutdown=True, **values)


@pytest.mark.parametrize("value", HOSTILE_TAG_VALUES)
@pytest.mark.parametrize("field", ["environment", "owner", "cost_center"])
def test_cost_tags_rejects_characters_outside_aws_tag_alphabet(field, value):
    problems = validate_cost_tags(_tags(**{field: value}))
    tag = {"environment": "Environment", "owner": "Owner", "cost_center": "CostCenter"}[field]
    assert any(p.input == f"tag {tag}" and "tag characters" in p.allowed for p in problems), problems


@pytest.mark.parametrize("value", FRIENDLY_TAG_VALUES)
def test_cost_tags_accept_unicode_letters_and_aws_punctuation(value):
    assert validate_cost_tags(_tags(owner=value, environment=value)) == []


def test_cost_tags_rejects_hostile_extra_tag_key():
    tags = CostTags(
        cost_center="ml", environment="dev", owner="me", auto_shutdown=True, extra={"Team\n": "x"}
    )
    problems = validate_cost_tags(tags)
    assert [p.input for p in problems] == ["tag key 'Team\\n'"]


@pytest.mark.parametrize("value", [*FRIENDLY_TAG_VALUES, "dev", "prod-eu"])
def test_cost_tags_accepted_are_what_the_watchdog_reads_back(value, harness, plan_of):
    # The AWS watchdog scopes itself to the registered Environment: whatever register_cost_tags accepts,
    # the deployed Lambda's own settings reader must accept too (else it fails on every run and no idle
    # machine is ever stopped).
    harness.in_loop(lambda: register_cost_tags(_tags(environment=value)))
    function = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())).one("aws:lambda/function:Function")
    env = function.props["environment"]["variables"]
    assert dict(Settings.from_env(env).scope_tags) == {"Environment": value}


def test_register_cost_tags_rejects_hostile_environment_before_any_resource(harness, plan_of):
    def program() -> None:
        register_cost_tags(_tags(environment="dev\nx"))
        IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())

    with pytest.raises(InputError, match=r"tag Environment 'dev\\nx' must use only letters, digits"):
        harness.in_loop(program)
    assert not [r for r in plan_of().resources if r.type.startswith("aws:")]


def _fleet(tags: dict[str, str]) -> GpuFleet:
    return GpuFleet(
        "chat",
        GpuFleetArgs(
            instance_type="g6.xlarge",
            vpc_id="vpc-0123456789abcdef0",
            subnets=[SubnetRef(id="subnet-0aaaaaaaaaaaaaaaa", availability_zone="us-east-1a")],
            spot=1,
            tags=tags,
        ),
    )


@pytest.mark.parametrize(
    ("tags", "named"),
    [
        ({"aws:team": "search"}, "tags key 'aws:team'"),  # AWS reserves the prefix: CreateTags refuses it
        ({"Team\n": "search"}, "tags key 'Team\\n'"),
        ({"Team": "$(id)\n`x`"}, "tags['Team']"),
        ({"Team": "x" * 257}, "tags['Team']"),
        ({f"k{i}": "v" for i in range(51)}, "tags"),
    ],
)
def test_aws_fleet_rejects_tags_aws_refuses(tags, named, tagged):
    with pytest.raises(InputError) as raised:
        _fleet(tags)
    assert named in str(raised.value)


def test_aws_fleet_keeps_tags_aws_takes(tagged, plan_of):
    instance = plan_of(_fleet({"Team": "José Müller", "Project": "a/b:c=d"})).one("aws:ec2/instance:Instance")
    assert instance.props["tags"]["Team"] == "José Müller"


@pytest.mark.parametrize("tags", [{"aws:x": "1"}, {"Team": "a\nb"}, {"Team": "$(id)"}, {"Name": "x" * 300}])
def test_aws_tag_problems_rejects_what_any_aws_service_refuses(tags):
    from inference_infra.components.tagging import aws_tag_problems

    assert aws_tag_problems("tags", tags)


def test_aws_tag_problems_accepts_empty_values_and_unicode_letters():
    from inference_infra.components.tagging import aws_tag_problems

    assert aws_tag_problems("tags", {"Team": "", "Owner": "Łukasz"}) == []


STACK_PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"


@pytest.mark.parametrize(
    ("key", "value"),
    [("owner", "'team$(id)@example.com'"), ("costCenter", '"ml\\nplatform"'), ("owner", "'ml*'")],
)
def test_stack_file_rejects_cost_tags_outside_aws_tag_alphabet(key, value, pulumi_project, capsys):
    from inference_infra.components.cli import main

    values = {"costCenter": "ml", "owner": "me", key: value}
    stack = "config:\n  aws:region: us-east-1\n" + "".join(
        f"  inference-infra:{k}: {v}\n" for k, v in values.items()
    )
    folder = pulumi_project(STACK_PROGRAM, {"dev": stack})
    code = main(["plan", "--stack", "dev", "--cwd", str(folder)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert f"inference-infra:{key}" in err
    assert "tag characters" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("tags", [{"k\n": "v"}, {"karpenter.sh/discovery": "eks$(id)"}, {"Name": "a\tb"}])
def test_karpenter_node_selector_tags_rejects_what_no_ec2_resource_carries(tags):
    from inference_infra.components.k8s import KarpenterNodesArgs
    from inference_infra.components.k8s.node_capacity_args import validate_karpenter_nodes

    args = KarpenterNodesArgs(
        pool="chat",
        instance_type="g6e.2xlarge",
        region="us-east-1",
        max_nodes=2,
        node_role="KarpenterNodeRole-eks-dev",
        subnet_tags=tags,
        security_group_tags={"karpenter.sh/discovery": "eks-dev"},
    )
    found = [p.input for p in validate_karpenter_nodes(args)]
    assert found
    assert all(name.startswith("subnet_tags") for name in found), found


def test_karpenter_node_selector_tags_may_read_aws_own_tags():
    from inference_infra.components.tagging import aws_tag_problems

    assert aws_tag_problems("subnet_tags", {"aws:cloudformation:stack-name": "eks"}, selector=True) == []
    assert aws_tag_problems("tags", {"aws:cloudformation:stack-name": "eks"})


def test_stack_file_rejects_a_fleet_tag_aws_refuses(pulumi_project, capsys):
    from inference_infra.components.cli import main

    fleet = {
        "name": "serving",
        "instanceType": "g6e.xlarge",
        "onDemand": 1,
        "tags": {"aws:team": "search"},
    }
    stack = (
        "config:\n  aws:region: us-east-1\n  inference-infra:costCenter: ml\n  inference-infra:owner: me\n"
        "  inference-infra:awsNetwork:\n    vpcId: vpc-0abc\n"
        "    subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]\n"
        f"  inference-infra:awsGpuFleets: {json.dumps([fleet])}\n"
    )
    folder = pulumi_project(STACK_PROGRAM, {"dev": stack})
    code = main(["plan", "--stack", "dev", "--cwd", str(folder)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "awsGpuFleets[0].tags" in err
    assert "aws:team" in err
    assert "Traceback" not in err
