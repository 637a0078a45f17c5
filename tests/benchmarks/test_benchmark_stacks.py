"""The benchmarks' own stack files stay valid as the stack config grows stricter.

`make bench` is not part of the test run, so a benchmark whose stack the config later refuses (a new
required key in production) would only fail when someone measures. Planning its stack once here
catches that in CI.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

from inference_infra.components.offline_plan import plan

ROOT = Path(__file__).resolve().parents[2]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_aws_fleet_plan_benchmark_stack_plans_with_its_64_gpu_instances(tmp_path):
    bench = _module("aws_fleet_plan")
    (tmp_path / "Pulumi.yaml").write_text("name: inference-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(bench.PROGRAM)
    (tmp_path / "Pulumi.bench.yaml").write_text(textwrap.dedent(bench.STACK))
    result = plan(tmp_path, "bench")
    instances = [r for r in result.capture.resources if r.type == "aws:ec2/instance:Instance"]
    assert len(instances) >= 60
