"""Running a pack's policies over a capture as the SDK's analyzer would, and the report it makes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest

from inference_infra.components.offline_plan.policy import PolicyPackError, evaluate, evaluate_policies
from inference_infra.components.offline_plan.policy_pack import load_pack, reconcile
from inference_infra.policy.rules import POLICIES

PACK = """
import asyncio
from pulumi_policy import (
    EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy,
)

def bucket_names(args, report):
    if args.resource_type != "aws:s3/bucket:Bucket":
        args.not_applicable("buckets only")
    if args.props["bucket"].startswith("tmp"):  # the SDK's proxy raises when it is not known yet
        report(f"{args.name}: temporary bucket name")

async def regions(args, report):
    await asyncio.sleep(0)
    provider = args.provider.props.get("region") if args.provider else None
    if provider is not None and provider != "us-east-1":
        report(f"{args.name} is in {provider}")

def tree(args, report):
    by_name = {r.name: r for r in args.resources}
    child = by_name["pool-0"]
    report(f"pool-0 parent={child.parent.name} deps={[d.name for d in child.dependencies]}", child.urn)
    report(f"{len(args.resources)} resources")

def broken(args, report):
    raise KeyError("nope")

PolicyPack(
    name="acme",
    policies=[
        ResourceValidationPolicy(name="bucket-names", description="d", validate=bucket_names),
        ResourceValidationPolicy(name="regions", description="d", validate=regions),
        StackValidationPolicy(name="tree", description="d", validate=tree),
        ResourceValidationPolicy(name="broken", description="d", validate=broken),
    ],
    enforcement_level=EnforcementLevel.MANDATORY,
)
"""


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    folder = tmp_path_factory.mktemp("acme")
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (folder / "__main__.py").write_text(textwrap.dedent(PACK))
    return load_pack(folder)


def _run(pack, capture, **levels):
    given = {
        "all": ("disabled", {}),
        **{name.replace("_", "-"): (level, {}) for name, level in levels.items()},
    }
    return evaluate(capture, pack, reconcile(pack, given, "test"))


class Pool(pulumi.ComponentResource):
    def __init__(self, name: str) -> None:
        super().__init__("acme:index:Pool", name, None, None)
        role = aws.iam.Role(f"{name}-role", assume_role_policy="{}", opts=pulumi.ResourceOptions(parent=self))
        aws.iam.RolePolicy(
            f"{name}-0",
            role=role.name,
            policy="{}",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role]),
        )
        self.register_outputs({"role": role.name})


def test_evaluate_reports_mandatory_and_advisory_violations(plan_of, pack):
    aws.s3.Bucket("scratch", bucket="tmp-scratch")
    aws.s3.Bucket("models", bucket="models")
    mandatory = _run(pack, plan_of(), bucket_names="mandatory")
    assert [(v.policy, v.enforcement, v.message) for v in mandatory.violations] == [
        ("bucket-names", "mandatory", "scratch: temporary bucket name")
    ]
    assert mandatory.violations[0].urn.endswith("aws:s3/bucket:Bucket::scratch")
    assert mandatory.gate_failed
    advisory = _run(pack, plan_of(), bucket_names="advisory")
    assert [v.enforcement for v in advisory.violations] == ["advisory"]
    assert not advisory.gate_failed
    remediate = _run(pack, plan_of(), bucket_names="remediate")
    assert [v.enforcement for v in remediate.violations] == ["mandatory"]  # as the SDK reports it


def test_evaluate_says_when_a_policy_applies_to_nothing_or_is_disabled(plan_of, pack):
    aws.iam.Role("role", assume_role_policy="{}")
    report = _run(pack, plan_of(), bucket_names="mandatory")
    assert [(n.policy, n.reason) for n in report.not_applicable] == [
        ("bucket-names", "not applicable to any of the 2 resources: buckets only"),
        ("regions", "disabled by the policy config"),
        ("tree", "disabled by the policy config"),
        ("broken", "disabled by the policy config"),
    ]
    assert report.policies == 1


def test_evaluate_lists_values_not_known_yet_as_undetermined_not_violations(plan_of, pack):
    role = aws.iam.Role("role", assume_role_policy="{}")
    aws.s3.Bucket("named-later", bucket=role.unique_id)  # known only once the role exists
    report = _run(pack, plan_of(), bucket_names="mandatory")
    assert report.violations == []
    assert [(u.policy, u.message) for u in report.undetermined] == [
        (
            "bucket-names",
            "can't run policy 'bucket-names' from policy pack 'acme@v0.0.1' during preview: "
            "string value at .bucket can't be known during preview",
        )
    ]


@pytest.mark.stack_config({"aws:region": "eu-west-1"})
def test_evaluate_passes_the_default_provider_from_config_and_awaits_async_checks(plan_of, pack):
    aws.iam.Role("role", assume_role_policy="{}")
    report = _run(pack, plan_of(), regions="mandatory")
    assert [v.message for v in report.violations] == ["role is in eu-west-1"]


def test_evaluate_gives_stack_policies_linked_parents_dependencies_and_components(plan_of, pack):
    Pool("pool")
    report = _run(pack, plan_of(), tree="advisory")
    first, second = report.violations
    assert first.message == "pool-0 parent=pool deps=['pool-role']"
    assert first.urn.endswith("acme:index:Pool$aws:iam/rolePolicy:RolePolicy::pool-0")
    assert (second.message, second.urn) == ("4 resources", None)  # root stack, component, two children


def test_evaluate_rejects_a_policy_that_fails_with_exit_2(plan_of, pack):
    aws.iam.Role("role", assume_role_policy="{}")
    with pytest.raises(PolicyPackError) as caught:
        _run(pack, plan_of(), broken="mandatory")
    assert str(caught.value).startswith("policy 'broken' of pack acme@v0.0.1 failed on urn:pulumi:test::")
    assert str(caught.value).endswith(": KeyError: 'nope'.")


def test_evaluate_policies_without_a_pack_says_it_did_not_evaluate(plan_of):
    report = evaluate_policies(plan_of(), None, None)
    assert report.as_json() == {"evaluated": False, "violations": []}
    assert report.note == "no policy pack (pass --policy-pack DIR)"


def test_evaluate_policies_reads_the_config_file(plan_of, tmp_path: Path):
    aws.ec2.Instance("gpu", instance_type="p5.48xlarge", ami="ami-1")
    config = tmp_path / "c.json"
    config.write_text(
        '{"all": "disabled", "accelerator-spend-budget": {"enforcementLevel": "advisory", "maxHourlyUsd": 1}}'
    )
    pack_dir = Path(__file__).resolve().parents[3] / "policy"
    doc = evaluate_policies(plan_of(), pack_dir, config).as_json()
    assert doc["pack"] == "inference-infra@v0.1.0"
    assert doc["config"] == str(config)
    assert [(v["policy"], v["enforcement"], v["urn"]) for v in doc["violations"]] == [
        ("accelerator-spend-budget", "advisory", None)
    ]
    assert len(doc["not_applicable"]) == len(POLICIES) - 1  # every policy but the budget
