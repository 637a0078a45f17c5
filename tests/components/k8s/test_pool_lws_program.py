"""A user's program with a pool whose replica spans two GPU hosts, planned offline as written (the policy
pack on): the LeaderWorkerSet and every object against their schemas, the pack's Kubernetes rules judging
the leader and worker templates and passing them, the node capacity priced as hosts x replicas machines.
The same program is README.md's multi-host example (tests/test_readme_examples.py plans it too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import plan
from tests.components.k8s.manifests import objects_of, validate

README = Path(__file__).resolve().parents[3] / "README.md"
LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
STACK = """\
config:
  aws:region: us-east-1
"""


def readme_program() -> str:
    """README.md's multi-host example: the ```python block that sets hosts_per_replica."""
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.M | re.S)
    (program,) = [b for b in blocks if "hosts_per_replica" in b]
    return program


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("k8s-lws-program")
    (folder / "Pulumi.yaml").write_text("name: k8s-lws\nruntime: python\n")
    (folder / "Pulumi.test.yaml").write_text(STACK)
    (folder / "__main__.py").write_text(readme_program())
    return plan(folder, "test")


def test_pool_lws_program_plans_as_written_and_passes_the_pack(planned):
    assert planned.exit_code == 0, planned.policy.violations
    judged = {
        "k8s-accelerator-pods-unprivileged",
        "k8s-accelerator-requests-equal-limits",
        "accelerator-images-pinned",
        "required-cost-tags",
    }
    assert judged.isdisjoint(n.policy for n in planned.policy.not_applicable)
    assert planned.policy.violations == []
    capture = planned.capture
    assert capture.of_type("kubernetes:apps/v1:Deployment") == []
    lws = capture.one(LWS_TYPE, "llama-405b-engine").props
    group = lws["spec"]["leaderWorkerTemplate"]
    assert group["size"] == 2
    for template in (group["leaderTemplate"], group["workerTemplate"]):
        assert template["metadata"]["labels"]["cost-center"] == "ml-platform"
    assert capture.stack_outputs["hosts_per_replica"] == 2
    assert capture.stack_outputs["machine"] == "p5.48xlarge"
    # plan's notes: the hosts per replica, the engine flags, the GPUs of the leader and of the workers
    notes = " ".join(planned.notes())
    assert "each replica is a LeaderWorkerSet group of 2 pods on 2 p5.48xlarge nodes" in notes
    assert "--tensor-parallel-size 8 --pipeline-parallel-size 2" in notes
    assert "nvidia.com/gpu: 8 per pod x 1 replica at spec.leaderWorkerTemplate.leaderTemplate.spec" in notes
    workers = "nvidia.com/gpu: 8 per pod x 1 replica x 1 worker per group"
    assert f"{workers} at spec.leaderWorkerTemplate.workerTemplate.spec" in notes


def test_pool_lws_program_objects_match_their_schemas(planned):
    found = [o for o in objects_of(planned.capture) if o["kind"] != "Secret"]
    assert "LeaderWorkerSet" in {o["kind"] for o in found}
    for manifest in found:
        assert validate(manifest) == [], manifest["kind"]


def test_pool_lws_program_buys_and_prices_hosts_times_replicas_nodes(planned):
    (group,) = planned.capture.of_type("aws:eks/nodeGroup:NodeGroup")
    assert group.props["capacityType"] == "ON_DEMAND"
    assert group.props["scalingConfig"] == {"minSize": 2, "maxSize": 2, "desiredSize": 2}  # 1 replica x 2
    (item,) = [i for i in planned.cost.items if i.urn == group.urn and i.category == "accelerator"]
    assert item.basis.startswith("2 x p5.48xlarge on-demand us-east-1")
    assert planned.cost.accelerators_hourly_usd == item.hourly_usd
