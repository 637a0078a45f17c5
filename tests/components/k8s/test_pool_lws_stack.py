"""The reference stack's kubernetesPools with hostsPerReplica: a LeaderWorkerSet, its $/hour recorded for
the whole group (hosts x replicas machines), and a bad value refused by its config key."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan

REPO = Path(__file__).resolve().parents[3]
STACK = """\
config:
  aws:region: us-east-1
  inference-infra:costCenter: ml-platform
  inference-infra:owner: ml@example.com
  inference-infra:modelStore:
    bucketName: acme-models
    publishers: [arn:aws:iam::123456789012:role/model-publisher]
  inference-infra:observability:
    kubeContext: inference-dev
  inference-infra:kubernetesPools:
    - name: big
      model: {{name: llama-3.1-405b, contextTokens: 8192, concurrency: 32}}
      machine: p5.48xlarge
      hostsPerReplica: {hosts}
      onDemand: 1
      kubeContext: inference-dev
      eksOidcProviderArn: arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABCDEF01
      modelPrefix: llama-405b
      manifestSha256: {pin}
      apiKeySecret: arn:aws:secretsmanager:us-east-1:123456789012:secret:big-AbCdEf
"""


def _project(tmp_path: Path, hosts: int) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK.format(hosts=hosts, pin="a" * 64))
    return tmp_path


def test_stack_pool_over_two_hosts_renders_a_leaderworkerset_priced_as_its_nodes(tmp_path):
    result = plan(_project(tmp_path, 2), "dev")
    capture = result.capture
    lws = capture.one("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet", "big-engine").props
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert capture.of_type("kubernetes:apps/v1:Deployment") == []
    rule = capture.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule").props["spec"]
    records = {
        r["record"]: r["expr"]
        for g in rule["groups"]
        for r in g["rules"]
        if "record" in r and r.get("labels", {}).get("pool") == "big"
    }
    from inference_infra.components.catalog import instance_type

    p5 = instance_type("p5.48xlarge", "aws")
    price = float(
        records["inference_infra:pool_price_usd_per_hour"].removeprefix("vector(").removesuffix(")")
    )
    assert price == pytest.approx(2 * p5.hourly_usd[p5.reference_region], rel=1e-3)  # 1 replica x 2 hosts


def test_stack_refuses_hosts_per_replica_above_the_bound_by_its_key(tmp_path):
    with pytest.raises(InputError) as caught:
        plan(_project(tmp_path, 5), "dev")
    message = " ".join(str(caught.value).split())
    assert "kubernetesPools[0].hostsPerReplica" in message
    assert "must be 1 to 4" in message
