from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from inference_infra.components.cli import main
from inference_infra.components.monitoring.rules import RuleSettings, render_rules_yaml
from inference_infra.components.monitoring.thresholds import Thresholds

REPO = str(Path(__file__).resolve().parents[3])


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not installed: run .ci/system-deps (Debian package prometheus).")
    return path


def test_monitoring_rules_prints_the_default_rule_file(capsys):
    code, out, err = _run(capsys, "monitoring", "rules")
    assert (code, err) == (0, "")
    assert out == render_rules_yaml(RuleSettings())


def test_monitoring_rules_applies_threshold_overrides(capsys):
    code, out, _ = _run(
        capsys, "monitoring", "rules", "-t", "idle_utilization_percent=20", "--threshold", "idleMinutes=60"
    )
    assert code == 0
    expected = RuleSettings(thresholds=Thresholds(idle_utilization_percent=20, idle_minutes=60))
    assert yaml.safe_load(out) == yaml.safe_load(render_rules_yaml(expected))


def test_monitoring_rules_with_a_stack_uses_its_thresholds(capsys):
    code, out, _ = _run(capsys, "monitoring", "rules", "--stack", "prod", "--cwd", REPO)
    assert code == 0
    memory = next(
        r for r in yaml.safe_load(out)["groups"][0]["rules"] if r.get("alert") == "GpuMemoryPressure"
    )
    assert memory["expr"].endswith("> 95")


def test_monitoring_rules_with_the_prod_stack_prints_what_its_settings_render(capsys):
    """The output is what the reference stack's settings render (as the command printed them when it
    read infra/ itself): same text, same key order."""
    from inference_infra.components.offline_plan.project import load_project, load_stack
    from inference_infra.infra.config import NAMESPACE
    from inference_infra.infra.observability_stack import component_args
    from inference_infra.infra.stack_file import parse_stack_settings

    config = load_stack(load_project(Path(REPO)), "prod").values
    prefix = f"{NAMESPACE}:"
    raw = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
    args = component_args(
        parse_stack_settings(raw, stack="prod"),
        with_secrets=False,
        aws_region=config.get("aws:region"),
        gcp_region=config.get("gcp:region"),
    )
    code, out, err = _run(capsys, "monitoring", "rules", "--stack", "prod", "--cwd", REPO)
    assert (code, err) == (0, "")
    assert out == render_rules_yaml(args.rule_settings())


_PROGRAM = """\
from inference_infra.components.k8s.gpu_observability import GpuObservability, GpuObservabilityArgs
from inference_infra.components.monitoring.thresholds import Thresholds

for name, idle in {names}:
    GpuObservability(name, GpuObservabilityArgs(thresholds=Thresholds(idle_utilization_percent=idle)))
"""


def _program(tmp_path: Path, names: list[tuple[str, int]]) -> str:
    (tmp_path / "Pulumi.yaml").write_text("name: own-monitoring\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(_PROGRAM.format(names=names))
    return str(tmp_path)


def test_monitoring_rules_with_a_stack_reads_any_program_that_uses_gpu_observability(capsys, tmp_path):
    cwd = _program(tmp_path, [("obs", 20)])
    code, out, err = _run(capsys, "monitoring", "rules", "--stack", "dev", "--cwd", cwd)
    assert (code, err) == (0, "")
    expected = RuleSettings(thresholds=Thresholds(idle_utilization_percent=20))
    assert out == render_rules_yaml(expected)


def test_monitoring_rules_with_a_stack_picks_one_of_several_components(capsys, tmp_path):
    cwd = _program(tmp_path, [("obs-a", 20), ("obs-b", 25)])
    code, out, _ = _run(capsys, "monitoring", "rules", "--stack", "dev", "--cwd", cwd, "--component", "obs-b")
    assert code == 0
    assert out == render_rules_yaml(RuleSettings(thresholds=Thresholds(idle_utilization_percent=25)))
    code, out, err = _run(capsys, "monitoring", "rules", "--stack", "dev", "--cwd", cwd)
    assert (code, out) == (2, "")
    assert "deploys 2 GpuObservability components ('obs-a', 'obs-b'): pick one with --component" in " ".join(
        err.split()
    )
    code, _, err = _run(capsys, "monitoring", "rules", "--stack", "dev", "--cwd", cwd, "--component", "obs")
    assert code == 2
    assert "has no GpuObservability named 'obs'; it has 'obs-a', 'obs-b'" in " ".join(err.split())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-t", "idle_percent=3"], "threshold 'idle_percent' is not a threshold name (did you mean"),
        (["-t", "idleMinutes=ten"], "the value after '=' must be a whole number"),
        (["-t", "idle_utilization_percent"], "must be NAME=VALUE"),
        (["-t", "idle_utilization_percent=96"], "must be below saturated_utilization_percent"),
        (["--runbook-url", "wiki"], "rules.runbook_url 'wiki' must be an http(s) URL"),
        (["--stack", "dev", "--cwd", REPO], "stack 'dev' deploys no GpuObservability"),
        (["--stack", "staging", "--cwd", REPO], "unknown stack 'staging'"),
        (["--stack", "prod", "-t", "idleMinutes=60"], "--threshold set the rules rendered without --stack"),
        (
            ["--stack", "prod", "--runbook-url", "https://wiki"],
            "--runbook-url set the rules rendered without",
        ),
        (["--component", "gpu-obs"], "--component picks a stack's GpuObservability: it needs --stack"),
    ],
)
def test_monitoring_rules_rejects_bad_input_with_exit_2(capsys, argv, message):
    code, out, err = _run(capsys, "monitoring", "rules", *argv)
    assert code == 2
    assert out == ""
    assert message in " ".join(err.split())
    assert "Traceback" not in err


def test_monitoring_scrape_config_aws_is_a_valid_prometheus_config(capsys, tmp_path):
    code, out, _ = _run(
        capsys,
        "monitoring", "scrape-config", "--cloud", "aws",
        "--region", "us-east-1", "--region", "eu-west-1", "--tag", "Environment=prod", "--neuron-monitor",
    )  # fmt: skip
    assert code == 0
    config = yaml.safe_load(out)
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    assert set(jobs) == {"dcgm-exporter", "node-exporter", "neuron-monitor", "vllm"}
    assert [sd["region"] for sd in jobs["dcgm-exporter"]["ec2_sd_configs"]] == ["us-east-1", "eu-west-1"]
    path = tmp_path / "prometheus.yml"
    path.write_text(out)
    result = subprocess.run(
        [_promtool(), "check", "config", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_monitoring_scrape_config_gcp_with_rules_passes_promtool(capsys, tmp_path):
    assert _run(capsys, "monitoring", "rules")[0] == 0
    (tmp_path / "gpu-rules.yml").write_text(render_rules_yaml(RuleSettings()))
    code, out, _ = _run(
        capsys,
        "monitoring", "scrape-config", "--cloud", "gcp", "--project", "acme-inference",
        "--zone", "us-central1-a", "--label", "environment=prod", "--rule-file", "gpu-rules.yml",
        "--no-node-exporter", "--no-engine",
    )  # fmt: skip
    assert code == 0
    config = yaml.safe_load(out)
    assert [j["job_name"] for j in config["scrape_configs"]] == ["dcgm-exporter"]
    assert config["rule_files"] == ["gpu-rules.yml"]
    (tmp_path / "prometheus.yml").write_text(out)
    result = subprocess.run(
        [_promtool(), "check", "config", "prometheus.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cloud", "aws"], "region (unset) is required for EC2 discovery"),
        (
            ["--cloud", "aws", "--region", "us-east-1", "--zone", "us-central1-a"],
            "--zone applies to --cloud gcp",
        ),
        (
            ["--cloud", "gcp", "--project", "acme-inference", "--zone", "a", "--tag", "x=y"],
            "--tag applies to --cloud aws",
        ),
        (["--cloud", "gcp", "--zone", "us-central1-a"], "project '' must be a GCP project id"),
        (
            ["--cloud", "gcp", "--project", "acme-inference", "--zone", "us-central1-a", "--neuron-monitor"],
            "--neuron-monitor applies to --cloud aws",
        ),
        (
            ["--cloud", "aws", "--region", "us-east-1", "--tag", "Environment"],
            "--tag 'Environment' must be KEY=VALUE",
        ),
        (["--cloud", "azure"], "'azure' is not one of 'aws', 'gcp'"),
        # a filter value '*' or '?' is an EC2 wildcard (it would widen discovery to every instance), a
        # newline matches nothing: refused, naming the tag
        (
            ["--cloud", "aws", "--region", "us-east-1", "--tag", "Environment=*"],
            "tag 'Environment' '*' must be at most 256 of letters, digits, spaces and + - = . _ : / @",
        ),
        (
            ["--cloud", "aws", "--region", "us-east-1", "--tag", "Environment=pro?"],
            "tag 'Environment' 'pro?' must be at most 256",
        ),
        (
            ["--cloud", "aws", "--region", "us-east-1", "--tag", "Environment=prod\nx"],
            "tag 'Environment' 'prod\\nx' must be at most 256",
        ),
    ],
)
def test_monitoring_scrape_config_rejects_bad_input_with_exit_2(capsys, argv, message):
    code, out, err = _run(capsys, "monitoring", "scrape-config", *argv)
    assert code == 2
    assert out == ""
    assert message in " ".join(err.split())


def test_monitoring_dashboards_writes_json_files(capsys, tmp_path):
    code, out, _ = _run(capsys, "monitoring", "dashboards", "--out", str(tmp_path / "boards"), "--neuron")
    assert code == 0
    files = sorted((tmp_path / "boards").iterdir())
    assert [f.name for f in files] == [
        "inference-infra-gpu-fleet.json",
        "inference-infra-idle-cost.json",
        "inference-infra-serving-cost.json",
    ]
    assert out.split() == [str(f) for f in files]
    assert json.loads(files[0].read_text())["uid"] == "inference-infra-gpu-fleet"
