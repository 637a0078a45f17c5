"""How `inference-infra plan` scales with the number of accelerator instances.

Plans a generated program with 10, 100 and 1,000 GPU instances (each with its
own security group, launch template, instance and a spot half), each size in a
fresh interpreter, and prints seconds and milliseconds per resource, peak memory
(the process's maximum resident set) and the marginal memory per resource, the
marginal time per resource beyond start-up, and the start-up cost of importing
the provider SDKs. Target: linear growth and under 10 ms per resource beyond
start-up. Last, the bound: the reference dev stack with a pool of 100,000 spot
GPUs must be refused (exit 2) in under a second for the whole command, under 300 MB.

Run: .venv/bin/python benchmarks/plan_scale.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SIZES = (10, 100, 1000)

PROGRAM = """
import pulumi
import pulumi_aws as aws

from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="bench", owner="b@example.com", auto_shutdown=True))
count = pulumi.Config().require_int("instances")


class Pool(pulumi.ComponentResource):
    def __init__(self, name, count):
        super().__init__("bench:index:Pool", name, None, None)
        child = pulumi.ResourceOptions(parent=self)
        sg = aws.ec2.SecurityGroup(f"{name}-sg", vpc_id="vpc-0bench", opts=child)
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt", image_id="ami-0bench", instance_type="g5.xlarge",
            metadata_options={"http_tokens": "required"}, vpc_security_group_ids=[sg.id], opts=child,
        )
        self.instances = [
            aws.ec2.Instance(
                f"{name}-{i}", launch_template={"id": template.id, "version": "$Latest"},
                instance_market_options={"market_type": "spot"} if i % 2 else None,
                subnet_id="subnet-0bench", opts=child,
            )
            for i in range(count)
        ]
        self.register_outputs({"ids": [i.id for i in self.instances]})


pools = [Pool(f"pool{p}", count // 10) for p in range(10)]
pulumi.export("instances", sum(len(p.instances) for p in pools))
"""


def write_project(root: Path, instances: int) -> None:
    (root / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
    (root / "__main__.py").write_text(textwrap.dedent(PROGRAM))
    (root / "Pulumi.bench.yaml").write_text(
        f"config:\n  aws:region: us-east-1\n  bench:instances: {instances}\n"
    )


def import_cost(statement: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", statement], check=True, cwd=REPO_ROOT, stdout=subprocess.DEVNULL
        )
        best = min(best, time.perf_counter() - started)
    return best


ONE_RUN = """
import json, sys, time


def peak_mib():  # VmHWM: this process's own peak RSS (ru_maxrss keeps a forking parent's)
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


from pathlib import Path
from inference_infra.components.offline_plan import plan
import pulumi_aws  # start-up, the same at every size: not timed
started = time.perf_counter()
result = plan(Path(sys.argv[1]), "bench")
seconds = time.perf_counter() - started
print(json.dumps({"resources": len(result.capture.resources), "seconds": seconds,
                  "usd": result.cost.hourly_usd,
                  "peak_mib": peak_mib()}))
"""

BOUND_RUN = """
import sys, time


def peak_mib():  # VmHWM: this process's own peak RSS (ru_maxrss keeps a forking parent's)
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


started = time.perf_counter()  # the whole command, its imports included
from inference_infra.components.cli import main
code = main(["plan", "--cwd", sys.argv[1], "--stack", "big"])
print(code, time.perf_counter() - started, peak_mib())
"""


def one_run(root: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", ONE_RUN, str(root)], check=True, cwd=REPO_ROOT, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bound_run(tmp: Path, count: int = 100_000) -> tuple[int, float, float, float]:
    """The reference dev stack with `spot: <count>` in its first pool: exit code, seconds for the
    command in-process (imports included), peak MiB, and the whole process's wall seconds."""
    root = tmp / "bound"
    root.mkdir()
    (root / "Pulumi.yaml").write_text(
        f"name: inference-infra\nruntime: python\nmain: {REPO_ROOT / 'infra'}\n"
    )
    stack = (REPO_ROOT / "Pulumi.dev.yaml").read_text()
    assert "      spot: 1\n" in stack
    (root / "Pulumi.big.yaml").write_text(stack.replace("      spot: 1\n", f"      spot: {count}\n", 1))
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", BOUND_RUN, str(root)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    code, seconds, peak = out.stdout.split()
    return int(code), float(seconds), float(peak), wall


def main() -> None:
    baseline = import_cost("pass")
    print("Start-up (fresh interpreter, best of 3, minus a bare interpreter's start):")
    for label, statement in [
        ("import pulumi", "import pulumi"),
        ("import pulumi_aws", "import pulumi_aws"),
        ("import pulumi_gcp", "import pulumi_gcp"),
        ("import pulumi_kubernetes", "import pulumi_kubernetes"),
        (
            "inference-infra --help",
            "import sys; from inference_infra.components.cli import main; sys.argv=['x','--help']; main()",
        ),
    ]:
        print(f"  {label:<28} {import_cost(statement) - baseline:6.3f} s")

    print()
    print(
        f"{'instances':>9} {'resources':>9} {'plan s':>8} {'ms/resource':>12} {'peak MiB':>9} "
        f"{'KiB/resource':>12} {'USD/hour':>10}"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            root = Path(tmp) / str(size)
            root.mkdir()
            write_project(root, size)
            run = one_run(root)
            resources, seconds, peak = int(run["resources"]), run["seconds"], run["peak_mib"]
            rows.append((size, resources, seconds, peak))
            print(
                f"{size:>9} {resources:>9} {seconds:>8.2f} {1000 * seconds / resources:>12.2f} {peak:>9.0f} "
                f"{1024 * peak / resources:>12.0f} {run['usd']:>10.2f}"
            )
        code, seconds, peak, wall = bound_run(Path(tmp))
    (_, r_small, t_small, m_small), (_, r_large, t_large, m_large) = rows[0], rows[-1]
    marginal_ms = 1000 * (t_large - t_small) / (r_large - r_small)
    marginal_kib = 1024 * (m_large - m_small) / (r_large - r_small)
    growth = (t_large / r_large) / (rows[1][2] / rows[1][1])
    print()
    print(f"marginal cost beyond start-up: {marginal_ms:.2f} ms/resource (target < 10)")
    print(f"marginal peak memory: {marginal_kib:.0f} KiB/resource (peak RSS, 1,000 vs 10 instances)")
    print(f"per-resource time, 1,000 vs 100 instances: {growth:.2f}x (1.0 = perfectly linear)")
    print(
        f"bound: dev stack with spot: 100000 -> exit {code} in {seconds:.2f} s for the command "
        f"({wall:.2f} s for the whole process), peak {peak:.0f} MiB (targets: exit 2, < 1 s, < 300 MB)"
    )


def _warm(root: Path) -> Path:
    root.mkdir(parents=True)
    write_project(root, 10)
    return root


if __name__ == "__main__":
    main()
