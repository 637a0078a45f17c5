"""Plan time of a prod-like AWS stack with 64 GPU instances (offline, mock runtime).

    .venv/bin/python benchmarks/aws_fleet_plan.py [--runs 5]

Writes a throwaway Pulumi project that runs the reference stack (infra/) with a
prod-like config: existing VPC in three zones, S3 model store with gateway
endpoint, EFS cache, a 70B pool of p5.48xlarge (reserved + on-demand), two
spot pools for smaller models (diversified types) and an Inferentia2 pool;
64 GPU instances in all. Prints the median wall time of `plan` (capture,
pricing, report) and the time per registered resource.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from inference_infra.components.offline_plan import plan

PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"

STACK = """\
config:
  aws:region: us-east-1
  inference-infra:environment: prod
  inference-infra:costCenter: ml-platform
  inference-infra:owner: ml-platform-team@example.com
  inference-infra:awsNetwork:
    vpcId: vpc-0a1b2c3d4e5f60718
    subnets:
      - {id: subnet-0a1c0ffee0000001a, availabilityZone: us-east-1a}
      - {id: subnet-0b2c0ffee0000002b, availabilityZone: us-east-1b}
      - {id: subnet-0c3c0ffee0000003c, availabilityZone: us-east-1c}
    routeTableIds: [rtb-0a1b2c3d4e5f60718]
  inference-infra:modelStore:
    bucketName: acme-bench-models
    publishers: [arn:aws:iam::123456789012:role/model-publisher]
  inference-infra:efsModelCache: {}
  inference-infra:awsGpuFleets:
    - name: llama-70b
      instanceType: p5.48xlarge
      count: 16
      capacityOrder: [reserved, on-demand]
      reservation: {availabilityZone: us-east-1a, instanceCount: 12}
      modelPrefix: meta-llama/Llama-3.1-70B-Instruct
      manifestSha256: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
      efs: true
      clientSecurityGroupIds: [sg-0a1b2c3d4e5f6a7b8]
      monitoringSecurityGroupIds: [sg-0f9e8d7c6b5a4f3e2]
    - name: llama-8b
      instanceType: g6e.2xlarge
      spot: 28
      onDemand: 4
      spotInstanceTypes: [g6e.4xlarge, g6e.xlarge]
      modelPrefix: meta-llama/Llama-3.1-8B-Instruct
      manifestSha256: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
      clientSecurityGroupIds: [sg-0a1b2c3d4e5f6a7b8]
      monitoringSecurityGroupIds: [sg-0f9e8d7c6b5a4f3e2]
    - name: mistral-7b
      instanceType: g5.2xlarge
      count: 16
      maxSpot: 12
      spotInstanceTypes: [g5.4xlarge]
      modelPrefix: mistralai/Mistral-7B-Instruct-v0.3
      manifestSha256: cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
      clientSecurityGroupIds: [sg-0a1b2c3d4e5f6a7b8]
      monitoringSecurityGroupIds: [sg-0f9e8d7c6b5a4f3e2]
  inference-infra:awsInferentiaFleets:
    - name: inf2-llama-8b
      instanceType: inf2.8xlarge
      onDemand: 4
      modelPrefix: neuron/llama-3.1-8b-tp2
      manifestSha256: dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
      efs: true
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "Pulumi.yaml").write_text("name: inference-infra\nruntime: python\n")
        (root / "__main__.py").write_text(PROGRAM)
        (root / "Pulumi.bench.yaml").write_text(textwrap.dedent(STACK))
        plan(root, "bench")  # warm-up: imports, provider schemas
        times, result = [], None
        for _ in range(runs):
            started = time.perf_counter()
            result = plan(root, "bench")
            times.append(time.perf_counter() - started)
    assert result is not None
    resources = result.capture.resources
    gpus = [
        r
        for r in resources
        if r.type == "aws:ec2/instance:Instance" and not r.props["instanceType"].startswith("inf2")
    ]
    median = statistics.median(times)
    print(f"resources: {len(resources)} ({len(gpus)} GPU instances), runs: {runs}")
    print(f"plan time: median {median:.3f} s, min {min(times):.3f} s, max {max(times):.3f} s")
    print(f"per resource: {1000 * median / len(resources):.2f} ms")
    cost = result.cost
    print(f"cost: ${cost.hourly_usd:,.2f}/hour (accelerators ${cost.accelerators_hourly_usd:,.2f})")


if __name__ == "__main__":
    main()
