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
for each (issue #35). Three CPU figures per resource: the first plan in a fresh interpreter as a
user runs it (the provider modules the program uses, e.g. pulumi_gcp.compute, load on first use
inside it); the first plan with those modules loaded beforehand and timed apart (a cost per
program, whatever its size: they are listed by a first run in another process); a second plan in
the same process (every kept scan result dropped).

Run: .venv/bin/python benchmarks/plan_scale.py            (everything)
     .venv/bin/python benchmarks/plan_scale.py stacks     (the side-by-side section only)
"""

from __future__ import annotations

import base64
import json
import os
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


PROVIDER_MODULES_RUN = """
import json, sys
from pathlib import Path
from inference_infra.components.offline_plan import plan
import pulumi_aws, pulumi_gcp, pulumi_kubernetes


def loaded():  # a provider's submodules sit in sys.modules as lazy modules until first used
    return {name for name, module in sys.modules.items() if type(module).__name__ != "_LazyModule"}


before = loaded()
plan(Path(sys.argv[1]), sys.argv[2])
providers = ("pulumi_aws.", "pulumi_gcp.", "pulumi_kubernetes.")
new = [m for m in loaded() - before if m.startswith(providers) and hasattr(sys.modules[m], "__path__")]
print(json.dumps(sorted(new)))  # the packages, parents first
"""

STACK_RUN = """
import gc, importlib, json, sys, time
from pathlib import Path
from inference_infra.components.offline_plan import plan
from inference_infra.components.aws import bootstrap
from inference_infra.components.resources import boot, secrets
from inference_infra.policy.rules import accelerator_images_pinned
import pulumi_aws, pulumi_gcp, pulumi_kubernetes  # start-up, the same for every program: not timed

kept = [secrets._text_hits, secrets._opened, boot.cloud_config, accelerator_images_pinned._unpinned]
kept += [bootstrap.compact_python] if hasattr(bootstrap.compact_python, "cache_clear") else []


def load(modules):
    # The provider modules the program uses (listed by a first run in another process), loaded as
    # the program's first use of each would load them: a cost per program, not per resource.
    started = time.process_time()
    for name in modules:
        getattr(importlib.import_module(name), "__all__", None)  # a lazy module loads on first access
    return time.process_time() - started


def once():
    for cache in kept:
        cache.cache_clear()  # nothing carried over from the first plan: every script scanned again
    started, cpu = time.perf_counter(), time.process_time()
    result = plan(Path(sys.argv[1]), sys.argv[2])
    return len(result.capture.resources), time.perf_counter() - started, time.process_time() - cpu


modules = json.loads(sys.argv[3])
providers = load(modules) if sys.argv[4] == "preload" else 0.0
resources, seconds, cpu = once()  # cold: the provider modules the program uses load on first use
_, warm_seconds, warm_cpu = once()  # warm: those loaded; what each further plan in a process costs
print(json.dumps({"resources": resources, "seconds": seconds, "cpu": cpu, "warm_seconds": warm_seconds,
                  "warm_cpu": warm_cpu, "providers_cpu": providers}))
"""


# Each run as an installed library runs: with its modules' bytecode cached (pip compiles a wheel's
# modules at install; an environment with PYTHONDONTWRITEBYTECODE=1, as this machine's sessions
# have, would otherwise compile the library's and the program's ~150 modules from source in every
# run, about half a second of CPU). The cache goes to a folder of its own, not into the checkout.
RUN_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "inference-infra-bench-pycache"),
}


def provider_modules(root: Path, stack: str) -> list[str]:
    """The provider SDK modules a program's plan loads beyond the top-level packages."""
    out = subprocess.run(
        [sys.executable, "-c", PROVIDER_MODULES_RUN, str(root), stack],
        check=True,
        env=RUN_ENV,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def stack_run(root: Path, stack: str, modules: list[str], preload: bool) -> dict[str, float]:
    """Resources, wall seconds and CPU seconds (every thread of the process) of the first plan in a
    fresh interpreter, CPU seconds of a second plan of the same program in that process (its
    provider modules loaded, every kept scan result dropped) and, with `preload`, the CPU seconds of
    loading the program's provider modules before the first plan (start-up, apart)."""
    out = subprocess.run(
        [sys.executable, "-c", STACK_RUN, str(root), stack, json.dumps(modules), "preload" * preload or "-"],
        check=True,
        env=RUN_ENV,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


Row = tuple[str, int, float, float, float, float, float, float, float]


def side_by_side(tmp: Path) -> list[Row]:
    """(program, resources, wall s, CPU s of the first plan, CPU s of loading its provider modules,
    ms per resource beyond the trivial program's plan: wall, CPU, CPU with the provider modules
    loaded beforehand as start-up, CPU of a second plan). CPU time is what a quiet machine's wall
    time would be (the plan runs on one core at a time); on a shared machine wall time grows with the
    load, CPU time much less. Each program runs twice, each in a fresh interpreter: once as a user's
    first plan, once with the provider modules it uses loaded (and timed) before the clock starts."""
    trivial, gcp = tmp / "trivial", tmp / "gcp"
    for folder in (trivial, gcp):
        folder.mkdir()
    write_program(trivial, TRIVIAL_PROGRAM, "bench", "config:\n  aws:region: us-east-1\n")
    write_program(gcp, GCP_PROGRAM, "bench", "config:\n  gcp:project: bench\n  gcp:region: us-central1\n")
    (gcp / "scripts.json").write_text(json.dumps(gcp_scripts(GCP_VMS)))
    runs = {}
    for label, root, stack in (
        ("trivial (one bucket)", trivial, "bench"),
        ("reference prod stack", REPO_ROOT, "prod"),
        ("reference dev stack", REPO_ROOT, "dev"),
        (f"GCP, {GCP_VMS} VMs x 22,000-char lines", gcp, "bench"),
    ):
        modules = provider_modules(root, stack)
        runs[label] = (stack_run(root, stack, modules, False), stack_run(root, stack, modules, True))
    (base, base_pre) = runs.pop("trivial (one bucket)")
    trivial_row = ("trivial (one bucket)", int(base["resources"]), base["seconds"], base["cpu"])
    rows: list[Row] = [(*trivial_row, base_pre["providers_cpu"], 0.0, 0.0, 0.0, 0.0)]
    for label, (first, pre) in runs.items():
        extra = max(first["resources"] - base["resources"], 1)
        rows.append(
            (
                label,
                int(first["resources"]),
                first["seconds"],
                first["cpu"],
                pre["providers_cpu"],
                1000 * (first["seconds"] - base["seconds"]) / extra,
                1000 * (first["cpu"] - base["cpu"]) / extra,
                1000 * (pre["cpu"] - base_pre["cpu"]) / extra,
                1000 * (first["warm_cpu"] - base["warm_cpu"]) / extra,
            )
        )
    return rows


def print_side_by_side(rows: list[Row]) -> None:
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(
        f"Side by side in one run ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{' '.join(load)}; fresh interpreter each):"
    )
    print(f"  {'':<38} {'':>9} {'plan':>7} {'plan':>7} {'provider':>9}   ms/resource beyond start-up")
    print(
        f"  {'program':<38} {'resources':>9} {'wall s':>7} {'CPU s':>7} {'mods CPU':>9} {'wall':>8} "
        f"{'CPU':>8} {'CPU, mods':>9} {'CPU warm':>9}"
    )
    for label, resources, seconds, cpu, modules, beyond, beyond_cpu, beyond_pre, warm in rows:
        shown = [f"{beyond:.2f}", f"{beyond_cpu:.2f}", f"{beyond_pre:.2f}", f"{warm:.2f}"]
        if label.startswith("trivial"):
            shown = ["start-up"] * 4
        print(
            f"  {label:<38} {resources:>9} {seconds:>7.2f} {cpu:>7.2f} {modules:>9.2f} "
            + " ".join(f"{x:>8}" if i < 2 else f"{x:>9}" for i, x in enumerate(shown))
        )
    print(
        "  wall, CPU: the first plan in a fresh interpreter (the provider modules a program uses load on "
        "first use);\n  provider mods CPU: loading those modules alone (pulumi_gcp.compute is most of "
        "it), a cost per program;\n  CPU, mods: the first plan with them loaded beforehand as start-up; "
        "CPU warm: a second plan\n  of the same program in that process, every kept scan result dropped"
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
