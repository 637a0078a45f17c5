"""The pull-request gate on what careless teams write (tests/policy/careless/).

Each program is planned offline, as `inference-infra plan --stack <stack>` plans it (the reference
policy config of the stack), and must raise exactly the violations listed, by policy and resource:
the careless shapes of issue #26, each caught by a mandatory policy. The control program raises none.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import plan

CORPUS = Path(__file__).resolve().parent / "careless"
STACK = "config:\n  aws:region: us-east-1\n  gcp:project: careless-project\n  gcp:region: us-central1\n"

# program -> (stack, [(policy, resource name)] sorted)
EXPECTED: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "open_halves_aws": ("dev", [("no-open-ingress", "gpu-sg")]),
    "open_halves_gcp": ("dev", [("no-open-ingress", "vllm-high")]),
    "eip_on_gpu": ("dev", [("accelerator-no-public-ip", "gpu-ip")]),
    "public_s3": (
        "dev",
        [
            ("s3-bucket-not-public", "weights-acl"),
            ("s3-bucket-not-public", "weights-policy"),
            ("s3-bucket-not-public", "weights-public-access"),
        ],
    ),
    "public_gcs": ("dev", [("gcs-bucket-not-public", "everyone-admin")]),
    "wildcard_iam": (
        "dev",
        [
            ("iam-no-wildcard-access", "admin"),
            ("iam-no-wildcard-access", "workload"),
            ("iam-no-wildcard-access", "workload"),
        ],
    ),
    "editor_default_sa": ("dev", [("gcp-no-basic-roles", "editor")]),
    # The default account is the finding, whatever the scopes (cloud-platform alone is Google's advice).
    "gce_default_sa": ("dev", [("accelerator-service-account-restricted", "gpu")]),
    "plaintext_tokens": ("dev", [("no-plaintext-secrets", "gpu"), ("no-plaintext-secrets", "hf-token")]),
    "batch_untagged": (
        "dev",
        [
            ("nonprod-accelerators-spot-or-autoshutdown", "batch"),
            ("required-cost-tags", "batch"),  # its instances
            ("required-cost-tags", "batch-lt"),  # the template puts none on them either
        ],
    ),
    "asg_template_only": ("dev", [("nonprod-accelerators-spot-or-autoshutdown", "gpus")]),
    "prod_alb_unhardened": (
        "prod",
        [
            ("load-balancer-hardened-in-production", "alb"),
            ("load-balancer-hardened-in-production", "alb-logs"),
            ("load-balancer-hardened-in-production", "alb-logs"),
            ("vpc-flow-logs-in-production", "vpc"),
        ],
    ),
    "clean_control": ("dev", []),
}


def test_careless_corpus_lists_every_program():
    assert sorted(EXPECTED) == sorted(p.stem for p in CORPUS.glob("*.py") if not p.stem.startswith("_"))


def _plan(program: str, stack: str, tmp_path: Path):
    (tmp_path / "Pulumi.yaml").write_text("name: careless\nruntime: python\n")
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(STACK)
    shutil.copy(CORPUS / f"{program}.py", tmp_path / "__main__.py")
    shutil.copy(CORPUS / "_common.py", tmp_path / "_common.py")
    return plan(tmp_path, stack)


@pytest.mark.parametrize("program", sorted(EXPECTED))
def test_careless_corpus_passes_the_control_and_rejects_each_careless_program(program, tmp_path):
    stack, expected = EXPECTED[program]
    result = _plan(program, stack, tmp_path)
    found = sorted((v.policy, (v.urn or "").rsplit("::", 1)[-1]) for v in result.policy.violations)
    assert found == expected, [v.message for v in result.policy.violations]
    assert all(v.enforcement == "mandatory" for v in result.policy.violations)
    assert result.policy.undetermined == []
    assert result.exit_code == (1 if expected else 0)
