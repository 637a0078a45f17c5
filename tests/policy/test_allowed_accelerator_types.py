"""allowed-accelerator-types: per-environment allow lists of accelerator types."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp

from inference_infra.policy.rules import allowed_accelerator_types as rule
from inference_infra.policy.rules._base import Outcome

INSTANCE = "aws:ec2/instance:Instance"
RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"
GCE = "gcp:compute/instance:Instance"
TPU = "gcp:tpu/v2Vm:V2Vm"
ONE = "@one-accelerator (every catalog type with one accelerator, e.g. g6.xlarge, g6e.2xlarge, v5litepod-1)"


def widen(entry: str, example: str) -> str:
    example = f'["@one-accelerator", "{example}"]'
    return f"To widen it, set allowedTypes[{entry!r}] in the policy config, e.g. {example}."


def test_allowed_types_passes_one_accelerator_types_outside_prod_and_anything_in_prod(check):
    assert check(rule, INSTANCE, {"instanceType": "g6.xlarge", "tags": {"Environment": "dev"}}) == Outcome()
    assert check(rule, INSTANCE, {"instanceType": "g6e.2xlarge", "tags": {"Environment": "dev"}}) == Outcome()
    assert check(rule, TPU, {"acceleratorType": "v5litepod-1"}, {"environment": "dev"}) == Outcome()
    n1 = {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 1}]}
    assert check(rule, GCE, n1, {"environment": "dev"}) == Outcome()
    assert check(rule, INSTANCE, {"instanceType": "p5.48xlarge"}, {"environment": "prod"}) == Outcome()


def test_allowed_types_rejects_a_large_type_outside_prod(check):
    outcome = check(
        rule, INSTANCE, {"instanceType": "p5.48xlarge", "tags": {"Environment": "dev"}}, name="gpu"
    )
    assert outcome.violations == (
        f"aws:ec2/instance:Instance 'gpu' uses p5.48xlarge, which environment 'dev' does not allow; allowed "
        f"there: {ONE} (config allowedTypes['*']). {widen('dev', 'p5.48xlarge')}",
    )


def test_allowed_types_checks_reservations_tpus_and_n1_gpus_with_globs(check):
    config = {"allowedTypes": {"staging": ["g6.*", "v5litepod-*", "nvidia-l4"]}, "environment": "staging"}
    assert check(rule, RESERVATION, {"instanceType": "g6.12xlarge", "instanceCount": 2}, config) == Outcome()
    assert check(rule, TPU, {"acceleratorType": "v6e-8"}, config, name="tpu").violations == (
        "gcp:tpu/v2Vm:V2Vm 'tpu' uses v6e-8, which environment 'staging' does not allow; allowed there: "
        "g6.*, "
        "v5litepod-*, nvidia-l4 (config allowedTypes['staging']). " + widen("staging", "v6e-8"),
    )
    n1 = {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 1}]}
    assert check(rule, GCE, n1, config, name="vm").violations == (
        "gcp:compute/instance:Instance 'vm' uses nvidia-tesla-t4, which environment 'staging' does not "
        "allow; "
        "allowed there: g6.*, v5litepod-*, nvidia-l4 (config allowedTypes['staging']). "
        + widen("staging", "nvidia-tesla-t4"),
    )


def test_allowed_types_uses_the_catch_all_for_resources_without_environment(check):
    assert check(rule, INSTANCE, {"instanceType": "g6e.12xlarge"}, name="gpu").violations == (
        "aws:ec2/instance:Instance 'gpu' uses g6e.12xlarge, which an environment with no Environment tag "
        "does "
        f"not allow; allowed there: {ONE} (config allowedTypes['*']). {widen('*', 'g6e.12xlarge')}",
    )


def test_allowed_types_says_when_no_entry_covers_the_environment(check):
    config = {"allowedTypes": {"prod": ["*"]}, "environment": "dev"}
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge"}, config) == Outcome(
        not_applicable="allowedTypes has no entry for environment 'dev' and no '*' entry"
    )
    assert check(rule, INSTANCE, {"instanceType": "m5.large"}).not_applicable == (
        "applies to resources that run, launch or reserve accelerators, and to Karpenter NodePools "
        "whose requirements allow accelerator types"
    )


def test_allowed_types_on_captured_resources(plan_of, tagged, run_pack):
    aws.ec2.Instance("small", instance_type="g5.xlarge", ami="ami-1")
    aws.ec2.LaunchTemplate("big", instance_type="p4d.24xlarge", image_id="ami-1")
    gcp.tpu.V2Vm(
        "tpu", zone="us-central1-a", accelerator_type="v5litepod-1", runtime_version="v2-alpha-tpuv5-lite"
    )
    report = run_pack(plan_of(), rule.NAME)  # `tagged` says Environment=test: the '*' entry applies
    assert [v.message for v in report.violations] == [
        "aws:ec2/launchTemplate:LaunchTemplate 'big' uses p4d.24xlarge, which environment 'test' does not "
        f"allow; allowed there: {ONE} (config allowedTypes['*']). {widen('test', 'p4d.24xlarge')}"
    ]


NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def _pool(*requirements: dict) -> dict:
    return {"spec": {"template": {"spec": {"requirements": list(requirements)}}}}


def test_allowed_types_judges_every_type_a_karpenter_node_pool_may_launch(check):
    small = _pool({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge"]})
    assert check(rule, NODE_POOL, small, {"environment": "dev"}) == Outcome()
    family = _pool({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]})
    [message] = check(rule, NODE_POOL, family, {"environment": "dev"}, name="gpu").violations
    assert message.startswith("kubernetes:karpenter.sh/v1:NodePool 'gpu' may launch p5.48xlarge, which")
    assert message.endswith(
        "narrow its requirements (instance-type or instance-family) to allowed types. "
        + widen("dev", "p5.48xlarge")
    )
    cpu = _pool({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]})
    assert check(rule, NODE_POOL, cpu, {"environment": "dev"}).not_applicable


def test_allowed_types_rejects_two_accelerators_outside_prod_derived_from_the_catalog(check):
    assert "g6e.2xlarge" in rule.one_accelerator_types()  # one L40S, like g6e.xlarge
    assert "g6e.12xlarge" not in rule.one_accelerator_types()  # four
    two_t4 = {"machineType": "n1-standard-16", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 2}]}
    [message] = check(rule, GCE, two_t4, {"environment": "dev"}, name="vm").violations
    assert message.startswith(
        "gcp:compute/instance:Instance 'vm' uses nvidia-tesla-t4, which environment 'dev'"
    )
    widened = {"environment": "dev", "allowedTypes": {"dev": ["@one-accelerator", "g6e.12xlarge"]}}
    assert check(rule, INSTANCE, {"instanceType": "g6e.12xlarge"}, widened) == Outcome()
    assert check(rule, INSTANCE, {"instanceType": "g6e.2xlarge"}, widened) == Outcome()
