"""Plan time per resource with endpoints: the prod reference stack, and generated endpoints at scale.

1. `inference-infra plan --stack prod` in-process (fleets with engines, the AWS and GCP endpoints):
   seconds and milliseconds per resource.
2. A generated program: P pools of 8 GPU instances with 2 engines each behind one InferenceEndpoint
   (target group, 16 attachments, header rule and a weighted route per pool) for P = 5, 20, 80:
   milliseconds per resource and the marginal cost beyond start-up. Target: under 10 ms per resource.

Run: .venv/bin/python benchmarks/endpoint_plan.py
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SIZES = (5, 20, 80)

PROGRAM = """
import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="bench", owner="b@example.com", auto_shutdown=True))
count = pulumi.Config().require_int("pools")
pools, routes = [], []
for p in range(count):
    sg = aws.ec2.SecurityGroup(f"pool{p}-sg", vpc_id="vpc-0bench")
    ids = [aws.ec2.Instance(f"pool{p}-{i}", instance_type="p5.48xlarge", subnet_id="subnet-0bench").id
           for i in range(8)]
    pools.append(EndpointPool(name=f"pool{p}", model=f"model-{p // 2}", ports=[8000, 8001],
                              instance_ids=ids, security_group_id=sg.id))
    if p % 2:
        routes.append(Route(pools=[PoolWeight(f"pool{p - 1}", 95), PoolWeight(f"pool{p}", 5)]))
InferenceEndpoint("bench", InferenceEndpointArgs(
    vpc_id="vpc-0bench", subnet_ids=["subnet-0a", "subnet-0b"], pools=pools, routes=routes,
    client_cidr_blocks=["10.0.0.0/8"], access_logs_bucket="bench-logs"))
"""


def write_project(root: Path, pools: int) -> None:
    root.mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
    (root / "__main__.py").write_text(textwrap.dedent(PROGRAM))
    (root / "Pulumi.bench.yaml").write_text(f"config:\n  aws:region: us-east-1\n  bench:pools: {pools}\n")


def main() -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from inference_infra.components.offline_plan import plan

    plan(REPO_ROOT, "prod")  # pays the imports once
    started = time.perf_counter()
    result = plan(REPO_ROOT, "prod")
    seconds = time.perf_counter() - started
    count = len(result.capture.resources)
    endpoints = sum(
        1 for r in result.capture.resources if r.type.startswith(("aws:lb/", "gcp:compute/region"))
    )
    print(
        f"prod stack: {count} resources ({endpoints} load-balancer resources), {seconds:.2f} s, "
        f"{1000 * seconds / count:.2f} ms/resource, violations {len(result.policy.violations)}"
    )
    print()
    print(f"{'pools':>6} {'resources':>9} {'plan s':>8} {'ms/resource':>12}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            root = Path(tmp) / str(size)
            write_project(root, size)
            started = time.perf_counter()
            generated = plan(root, "bench")
            seconds = time.perf_counter() - started
            resources = len(generated.capture.resources)
            rows.append((resources, seconds))
            print(f"{size:>6} {resources:>9} {seconds:>8.2f} {1000 * seconds / resources:>12.2f}")
    (r_small, t_small), (r_large, t_large) = rows[0], rows[-1]
    print()
    print(
        f"marginal cost beyond start-up: {1000 * (t_large - t_small) / (r_large - r_small):.2f} ms/resource "
        "(target < 10)"
    )


if __name__ == "__main__":
    main()
