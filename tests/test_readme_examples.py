"""Every Python example in the READMEs runs as written, as a Pulumi program, under the offline plan.

Each ```python block of README.md and of the READMEs beside the code is a whole
program: it defines everything it uses. Fragments that are not programs are
fenced as ```text (or another language) and are not run. Each block is planned
with a stack config that sets the providers' regions and the secrets the
examples read, and must register every component it constructs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import plan

REPO_ROOT = Path(__file__).resolve().parents[1]
READMES = sorted(
    [REPO_ROOT / "README.md", *REPO_ROOT.glob("*/README.md"), *REPO_ROOT.glob("*/*/README.md")],
    key=lambda p: str(p),
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
# `Name(` then the resource name on the same or the next line: a component or resource being constructed.
CONSTRUCTED = re.compile(r"\b([A-Z]\w+)\(\s*\"([a-z][\w-]*)\",", re.M)
# Components whose type token's name differs from their class (the token is part of every child's URN).
TYPE_NAMES = {"GcpInferenceEndpoint": "InferenceEndpoint"}
STACK = """\
config:
  aws:region: us-east-1
  gcp:project: acme-inference
  gcp:region: us-central1
  gcp:zone: us-central1-a
  readme-example:pagerdutyKey:
    secure: v1:placeholder
  readme-example:slackWebhookUrl:
    secure: v1:placeholder
"""


def _examples() -> list[tuple[str, str]]:
    found = []
    for readme in READMES:
        for i, match in enumerate(BLOCK.finditer(readme.read_text()), start=1):
            found.append((f"{readme.relative_to(REPO_ROOT)}#{i}", match.group(1)))
    return found


EXAMPLES = _examples()


def test_readmes_have_python_examples():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_readme_example_plans_as_written(where, code, pulumi_project):
    project = pulumi_project(code, {"test": STACK}, name="readme-example")
    result = plan(project, "test")
    registered = {(r.type.rsplit(":", 1)[-1], r.name) for r in result.capture.resources}
    for cls, name in CONSTRUCTED.findall(code):
        if cls in {"CostTags", "SubnetRef", "Thresholds", "AlertReceiver", "Traffic", "Precision"}:
            continue  # plain argument values, not resources
        if cls.endswith("Args"):
            continue
        assert (TYPE_NAMES.get(cls, cls), name) in registered, f"{where}: {cls}({name!r}) was not registered"


COMPLETE = [
    (w, c)
    for w, c in EXAMPLES
    if w.startswith("README.md") and ("Endpoint(" in c or "KubernetesServingPool(" in c)
]


@pytest.mark.parametrize(("where", "code"), COMPLETE, ids=[w for w, _ in COMPLETE])
def test_readme_complete_examples_pass_the_default_pack(where, code, pulumi_project):
    # The README's complete AWS and GCP programs, as written, pass the library's own pack with its
    # default config (`plan` exits 0): a GCP fleet's dedicated account with the cloud-platform scope
    # included (#33 item 5).
    result = plan(pulumi_project(code, {"test": STACK}, name="readme-example"), "test")
    mandatory = [v.message for v in result.policy.violations if v.enforcement == "mandatory"]
    assert mandatory == [], where


def test_readme_complete_examples_cover_both_clouds():
    assert {"aws" if "components.aws import" in c else "gcp" for _, c in COMPLETE} == {"aws", "gcp"}


def test_readme_has_complete_kubernetes_programs_for_eks_and_gke_with_a_tpu_pool():
    # Issue #34 item 9: an EKS program and a GKE one serving on TPUs, each making its pool's nodes.
    pools = [c for _, c in COMPLETE if "KubernetesServingPool(" in c]
    eks = [c for c in pools if "Cloud.AWS" in c and "nodes=PoolEksNodeGroups(" in c]
    gke = [c for c in pools if "Cloud.GCP" in c and "GOOGLE_TPU" in c and "nodes=PoolGkeNodePools(" in c]
    assert eks
    assert gke
