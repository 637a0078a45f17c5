"""How `inference-infra plan` scales with the number of accelerator instances.

Plans a generated program with 10, 100 and 1,000 GPU instances (each with its
own security group, launch template, instance and a spot half), each size in a
fresh interpreter, and prints seconds and milliseconds per resource, peak memory
(the process's maximum resident set) and the marginal memory per resource, the
marginal time per resource beyond start-up, and the start-up cost of importing
the provider SDKs. Target: linear growth and under 10 ms per resource beyond
start-up. Last, the bound: the reference dev stack with a pool of 100,000 spot
GPUs must be refused (exit 2) in under a second for the whole command, under 300 MB.

First, side by side in one run (each in a fresh interpreter, provider SDKs imported before the clock
starts): a trivial program (one bucket), the reference prod and dev stacks, and a GCP program whose
GPU instances carry long startup scripts (a 22,000-character base64 line each, as the GCP fleets
render their bundles); each with milliseconds per resource beyond the trivial program's plan (the
start-up every plan pays: the runtime, the policy pack, pricing). Target: 10 ms per resource or less
for each (issue #35).

Run: .venv/bin/python benchmarks/plan_scale.py            (everything)
     .venv/bin/python benchmarks/plan_scale.py stacks     (the side-by-side section only)
"""

from __future__ import annotations

import base64
import json
import random
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


TRIVIAL_PROGRAM = """
import pulumi_aws as aws

from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="bench", owner="b@example.com", auto_shutdown=True))
aws.s3.BucketV2("trivial")
"""

GCP_VMS = 24  # GPU instances, each with its own startup script (and a template)
GCP_PROGRAM = """
import json
import pathlib

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="bench", owner="b@example.com", auto_shutdown=True))
scripts = json.loads(pathlib.Path("scripts.json").read_text())


class Pool(pulumi.ComponentResource):
    def __init__(self, name, scripts):
        super().__init__("bench:index:GcpPool", name, None, None)
        child = pulumi.ResourceOptions(parent=self)
        gpu = [{"type": "nvidia-l4", "count": 1}]
        boot = {"initialize_params": {"image": "projects/cos-cloud/global/images/cos-stable-117"}}
        network = [{"network": "default"}]
        policy = {"on_host_maintenance": "TERMINATE", "automatic_restart": False, "preemptible": True,
                  "provisioning_model": "SPOT", "instance_termination_action": "DELETE"}
        shielded = {"enable_secure_boot": True, "enable_vtpm": True, "enable_integrity_monitoring": True}
        gcp.compute.InstanceTemplate(
            f"{name}-template", machine_type="g2-standard-8", guest_accelerators=gpu,
            disks=[{"source_image": boot["initialize_params"]["image"], "boot": True}],
            network_interfaces=network, scheduling=policy, shielded_instance_config=shielded,
            metadata={"block-project-ssh-keys": "true"}, metadata_startup_script=scripts[0], opts=child,
        )
        for i, script in enumerate(scripts):
            gcp.compute.Instance(
                f"{name}-{i}", machine_type="g2-standard-8", zone="us-central1-a", boot_disk=boot,
                guest_accelerators=gpu, network_interfaces=network, scheduling=policy,
                shielded_instance_config=shielded, metadata={"block-project-ssh-keys": "true"},
                metadata_startup_script=script, opts=child,
            )


per_pool = len(scripts) // 4
pools = [Pool(f"pool{p}", scripts[p * per_pool : (p + 1) * per_pool]) for p in range(4)]
"""


def gcp_scripts(count: int, line_chars: int = 22_000) -> list[str]:
    """Startup scripts as a GCP fleet renders them: a bundle as one long base64 line, then the
    commands; each machine's differs (its name), so nothing is shared between them."""
    rng = random.Random(35)
    scripts = []
    for i in range(count):
        bundle = base64.b64encode(rng.randbytes(line_chars * 3 // 4)).decode()
        scripts.append(
            "#!/bin/bash\nset -euo pipefail\n"
            f"# machine {i}\n"
            "base64 -d > /opt/bundle.tar.gz <<'BUNDLE'\n"
            f"{bundle}\nBUNDLE\n"
            "tar -xzf /opt/bundle.tar.gz -C /opt\n"
            "docker run -d --gpus all -p 8000:8000 vllm/vllm-openai@sha256:" + "ab" * 32 + "\n"
        )
    return scripts


def write_program(root: Path, program: str, stack: str, config: str) -> None:
    (root / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
    (root / "__main__.py").write_text(textwrap.dedent(program))
    (root / f"Pulumi.{stack}.yaml").write_text(config)


STACK_RUN = """
import json, sys, time
from pathlib import Path
from inference_infra.components.offline_plan import plan
from inference_infra.components.resources import boot, secrets
from inference_infra.policy.rules import accelerator_images_pinned
import pulumi_aws, pulumi_gcp, pulumi_kubernetes  # start-up, the same for every program: not timed


def once():
    for kept in (secrets._text_hits, secrets._opened, boot.cloud_config, accelerator_images_pinned._unpinned):
        kept.cache_clear()  # nothing carried over from the first plan: every script scanned again
    started, cpu = time.perf_counter(), time.process_time()
    result = plan(Path(sys.argv[1]), sys.argv[2])
    return len(result.capture.resources), time.perf_counter() - started, time.process_time() - cpu


resources, seconds, cpu = once()  # cold: the provider modules the program uses load on first use
_, warm_seconds, warm_cpu = once()  # warm: those loaded; what each further plan in a process costs
print(json.dumps({"resources": resources, "seconds": seconds, "cpu": cpu, "warm_seconds": warm_seconds,
                  "warm_cpu": warm_cpu}))
"""


def stack_run(root: Path, stack: str) -> tuple[int, float, float, float]:
    """Resources, wall seconds and CPU seconds (every thread of the process) of the first plan in a
    fresh interpreter, and CPU seconds of a second plan of the same program in that process (its
    provider modules loaded, every kept scan result dropped)."""
    out = subprocess.run(
        [sys.executable, "-c", STACK_RUN, str(root), stack],
        check=True,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    run = json.loads(out.stdout.strip().splitlines()[-1])
    return int(run["resources"]), float(run["seconds"]), float(run["cpu"]), float(run["warm_cpu"])


Row = tuple[str, int, float, float, float, float, float]


def side_by_side(tmp: Path) -> list[Row]:
    """(program, resources, wall s, CPU s, ms per resource beyond the trivial program's plan in wall
    time and in CPU time). CPU time is what a quiet machine's wall time would be (the plan runs on
    one core at a time); on a shared machine wall time grows with the load, CPU time much less."""
    trivial, gcp = tmp / "trivial", tmp / "gcp"
    for folder in (trivial, gcp):
        folder.mkdir()
    write_program(trivial, TRIVIAL_PROGRAM, "bench", "config:\n  aws:region: us-east-1\n")
    write_program(gcp, GCP_PROGRAM, "bench", "config:\n  gcp:project: bench\n  gcp:region: us-central1\n")
    (gcp / "scripts.json").write_text(json.dumps(gcp_scripts(GCP_VMS)))
    base_resources, base_seconds, base_cpu, base_warm = stack_run(trivial, "bench")
    rows = [("trivial (one bucket)", base_resources, base_seconds, base_cpu, 0.0, 0.0, 0.0)]
    for label, root, stack in (
        ("reference prod stack", REPO_ROOT, "prod"),
        ("reference dev stack", REPO_ROOT, "dev"),
        (f"GCP, {GCP_VMS} VMs x 22,000-char lines", gcp, "bench"),
    ):
        resources, seconds, cpu, warm = stack_run(root, stack)
        extra = max(resources - base_resources, 1)
        beyond, beyond_cpu = 1000 * (seconds - base_seconds) / extra, 1000 * (cpu - base_cpu) / extra
        rows.append((label, resources, seconds, cpu, beyond, beyond_cpu, 1000 * (warm - base_warm) / extra))
    return rows


def print_side_by_side(rows: list[Row]) -> None:
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"Side by side in one run (load average {' '.join(load)}; fresh interpreter each):")
    print(f"  {'':<38} {'':>9} {'plan':>8} {'plan':>8}   ms/resource beyond start-up")
    print(
        f"  {'program':<38} {'resources':>9} {'wall s':>8} {'CPU s':>8} {'wall':>9} {'CPU':>9} "
        f"{'CPU warm':>9}"
    )
    for label, resources, seconds, cpu, beyond, beyond_cpu, warm in rows:
        shown = [f"{beyond:.2f}", f"{beyond_cpu:.2f}", f"{warm:.2f}"]
        if label.startswith("trivial"):
            shown = ["start-up"] * 3
        print(
            f"  {label:<38} {resources:>9} {seconds:>8.2f} {cpu:>8.2f} " + " ".join(f"{x:>9}" for x in shown)
        )
    print(
        "  wall, CPU: the first plan in a fresh interpreter (the provider modules a program uses load on "
        "first use);\n  CPU warm: a second plan of the same program in that process, every kept scan "
        "result dropped"
    )
    print("  target: 10 ms per resource or less beyond start-up for each (issue #35)")


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
    with tempfile.TemporaryDirectory() as tmp:
        print_side_by_side(side_by_side(Path(tmp)))
    if sys.argv[1:] == ["stacks"]:
        return
    print()
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
