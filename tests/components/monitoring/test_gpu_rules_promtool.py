"""`promtool test rules` unit tests: each alert fires when it should and stays silent when it should not.

Every case is one promtool test group (input series, then the alerts expected
at given times); promtool also checks the rendered summaries and descriptions,
so the annotation templates are exercised too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from inference_infra.components.monitoring.rules import (
    GPU_COST_SERIES,
    GPU_IDLE_COST_SERIES,
    RuleSettings,
    alert_rules,
    render_rules_yaml,
    rule_groups,
)
from inference_infra.components.monitoring.thresholds import Thresholds
from inference_infra.components.monitoring.weights import WEIGHTS_GROUP

GPU = {
    "job": "dcgm-exporter",
    "instance": "i-0abc",
    "node": "i-0abc",
    "gpu": "0",
    "UUID": "GPU-1234",
    "modelName": "NVIDIA A10G",
    "Hostname": "ip-10-0-0-7",
    "instance_type": "g5.xlarge",
}
K8S_GPU = {
    "job": "dcgm-exporter",
    "instance": "10.1.2.3:9400",
    "node": "gpu-node-1",
    "gpu": "3",
    "UUID": "GPU-5678",
    "modelName": "NVIDIA H100 80GB HBM3",
    "Hostname": "dcgm-exporter-x7k2p",
    "namespace": "serving",
    "pod": "vllm-0",
}


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def _render(template: str, labels: dict[str, str], value: float) -> str:
    """The few Go-template forms the rules use, rendered as Prometheus would."""
    text = re.sub(
        r"\{\{ with \$labels\.(\w+) \}\}\{\{ \. \}\}\{\{ else \}\}\{\{ \$labels\.(\w+) \}\}\{\{ end \}\}",
        lambda m: labels.get(m.group(1)) or labels.get(m.group(2), ""),
        template,
    )
    text = re.sub(r'\{\{ \$value \| printf "%\.(\d)f" \}\}', lambda m: f"{value:.{m.group(1)}f}", text)
    shown = str(int(value)) if float(value).is_integer() else repr(value)
    text = text.replace("{{ $value }}", shown)
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)


def _firing(alert: str, labels: dict[str, str], value: float, settings: RuleSettings) -> dict[str, Any]:
    rule = next(r for r in alert_rules(settings) if r["alert"] == alert)
    return {
        "exp_labels": {**labels, **rule["labels"]},
        "exp_annotations": {k: _render(v, labels, value) for k, v in rule["annotations"].items()},
    }


def _promtool_test(
    tmp_path: Path, promtool: str, run, tests: list[dict[str, Any]], settings: RuleSettings | None = None
) -> None:
    settings = settings or RuleSettings()
    (tmp_path / "rules.yml").write_text(render_rules_yaml(settings))
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def _case(
    series: list[dict[str, str]], checks: list[tuple[str, str, list[dict[str, Any]]]]
) -> dict[str, Any]:
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [{"eval_time": t, "alertname": a, "exp_alerts": exp} for t, a, exp in checks],
    }


def test_gpu_idle_fires_after_the_idle_window_with_readable_annotations(tmp_path, promtool, run):
    settings = RuleSettings()
    firing = _firing("GpuIdle", GPU, 0, settings)
    assert firing["exp_annotations"]["summary"] == "GPU idle for 30 minutes on i-0abc"
    assert firing["exp_annotations"]["description"].startswith(
        "GPU 0 (NVIDIA A10G) on i-0abc has averaged 0% utilization for 30 minutes, "
        "below the 30% idle threshold."
    )
    case = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "0x90")],
        [("29m", "GpuIdle", []), ("31m", "GpuIdle", [firing]), ("90m", "GpuIdle", [firing])],
    )
    _promtool_test(tmp_path, promtool, run, [case], settings)


def test_gpu_idle_is_never_raised_by_a_busy_or_bursty_gpu(tmp_path, promtool, run):
    busy = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "85x120")],
        [(f"{m}m", "GpuIdle", []) for m in (10, 31, 60, 120)],
    )
    # Alternates 0% and 100% every minute: it serves traffic in bursts, averaging 50%.
    bursty = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, " ".join(["0 100"] * 60))],
        [(f"{m}m", "GpuIdle", []) for m in (31, 60, 119)],
    )
    # Idle for 20 minutes, then busy: shorter than the idle window.
    short_lull = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "0x20 90x100")],
        [(f"{m}m", "GpuIdle", []) for m in (20, 31, 60)],
    )
    _promtool_test(tmp_path, promtool, run, [busy, bursty, short_lull])


def test_gpu_idle_uses_the_hostname_when_the_node_label_is_missing(tmp_path, promtool, run):
    labels = {k: v for k, v in GPU.items() if k != "node"}
    firing = _firing("GpuIdle", labels, 0, RuleSettings())
    assert firing["exp_annotations"]["summary"] == "GPU idle for 30 minutes on ip-10-0-0-7"
    case = _case([_series("DCGM_FI_DEV_GPU_UTIL", labels, "0x60")], [("40m", "GpuIdle", [firing])])
    _promtool_test(tmp_path, promtool, run, [case])


def test_gpu_idle_follows_custom_thresholds(tmp_path, promtool, run):
    settings = RuleSettings(thresholds=Thresholds(idle_utilization_percent=10, idle_minutes=60))
    # 20% is idle by the default 30% floor but not by a 10% floor.
    not_idle = _case([_series("DCGM_FI_DEV_GPU_UTIL", GPU, "20x120")], [("90m", "GpuIdle", [])])
    idle = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "5x120")],
        [("59m", "GpuIdle", []), ("61m", "GpuIdle", [_firing("GpuIdle", GPU, 5, settings)])],
    )
    _promtool_test(tmp_path, promtool, run, [not_idle, idle], settings)


def test_gpu_saturated_fires_only_on_sustained_saturation(tmp_path, promtool, run):
    settings = RuleSettings()
    saturated = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "99x40")],
        [("14m", "GpuSaturated", []), ("16m", "GpuSaturated", [_firing("GpuSaturated", GPU, 99, settings)])],
    )
    busy_not_saturated = _case(
        [_series("DCGM_FI_DEV_GPU_UTIL", GPU, "90x40")], [("30m", "GpuSaturated", []), ("30m", "GpuIdle", [])]
    )
    burst = _case([_series("DCGM_FI_DEV_GPU_UTIL", GPU, "99x10 60x30")], [("20m", "GpuSaturated", [])])
    _promtool_test(tmp_path, promtool, run, [saturated, busy_not_saturated, burst], settings)


def test_gpu_memory_pressure_fires_above_the_framebuffer_threshold(tmp_path, promtool, run):
    settings = RuleSettings()
    # 22000 MiB used of 22500 (A10G: 24 GiB less the driver's reservation): 97.8%.
    full = _case(
        [
            _series("DCGM_FI_DEV_FB_USED", GPU, "22000x20"),
            _series("DCGM_FI_DEV_FB_FREE", GPU, "500x20"),
        ],
        [
            ("4m", "GpuMemoryPressure", []),
            ("6m", "GpuMemoryPressure", [_firing("GpuMemoryPressure", GPU, 100 * 22000 / 22500, settings)]),
        ],
    )
    half = _case(
        [_series("DCGM_FI_DEV_FB_USED", GPU, "11000x20"), _series("DCGM_FI_DEV_FB_FREE", GPU, "11500x20")],
        [("15m", "GpuMemoryPressure", [])],
    )
    _promtool_test(tmp_path, promtool, run, [full, half], settings)


def test_gpu_memory_pressure_threshold_can_sit_above_vllms_reservation(tmp_path, promtool, run):
    settings = RuleSettings(thresholds=Thresholds(memory_used_percent=95))
    # vLLM's default --gpu-memory-utilization 0.9 plus the CUDA context: about 92%.
    vllm = _case(
        [_series("DCGM_FI_DEV_FB_USED", GPU, "20700x30"), _series("DCGM_FI_DEV_FB_FREE", GPU, "1800x30")],
        [("20m", "GpuMemoryPressure", [])],
    )
    _promtool_test(tmp_path, promtool, run, [vllm], settings)


def test_gpu_high_temperature_fires_after_five_hot_minutes(tmp_path, promtool, run):
    settings = RuleSettings()
    hot = _case(
        [_series("DCGM_FI_DEV_GPU_TEMP", GPU, "88x20")],
        [
            ("4m", "GpuHighTemperature", []),
            ("6m", "GpuHighTemperature", [_firing("GpuHighTemperature", GPU, 88, settings)]),
        ],
    )
    warm = _case([_series("DCGM_FI_DEV_GPU_TEMP", GPU, "75x20")], [("15m", "GpuHighTemperature", [])])
    spike = _case([_series("DCGM_FI_DEV_GPU_TEMP", GPU, "88x3 70x20")], [("10m", "GpuHighTemperature", [])])
    _promtool_test(tmp_path, promtool, run, [hot, warm, spike], settings)


def test_gpu_xid_errors_fire_at_once_with_the_xid_code(tmp_path, promtool, run):
    settings = RuleSettings()
    firing = _firing("GpuXidErrors", K8S_GPU, 79, settings)
    assert firing["exp_labels"]["severity"] == "critical"
    assert firing["exp_labels"]["pod"] == "vllm-0"  # the workload on the GPU, kept by honorLabels
    assert "reported XID 79" in firing["exp_annotations"]["description"]
    fault = _case(
        [_series("DCGM_FI_DEV_XID_ERRORS", K8S_GPU, "0 0 79 79 79")],
        [("1m", "GpuXidErrors", []), ("2m", "GpuXidErrors", [firing])],
    )
    healthy = _case([_series("DCGM_FI_DEV_XID_ERRORS", K8S_GPU, "0x30")], [("20m", "GpuXidErrors", [])])
    _promtool_test(tmp_path, promtool, run, [fault, healthy], settings)


def test_dcgm_exporter_down_fires_for_the_exporter_job_only(tmp_path, promtool, run):
    settings = RuleSettings()
    target = {"job": "dcgm-exporter", "instance": "i-0abc", "node": "i-0abc"}
    down = _case(
        [_series("up", target, "1 1 0x20")],
        [
            ("5m", "DcgmExporterDown", []),
            ("8m", "DcgmExporterDown", [_firing("DcgmExporterDown", target, 0, settings)]),
        ],
    )
    node_exporter_down = _case(
        [_series("up", {**target, "job": "node-exporter"}, "0x20")], [("15m", "DcgmExporterDown", [])]
    )
    healthy = _case([_series("up", target, "1x20")], [("15m", "DcgmExporterDown", [])])
    _promtool_test(tmp_path, promtool, run, [down, node_exporter_down, healthy], settings)


def _price(instance_type: str) -> float:
    rules = yaml.safe_load(render_rules_yaml())["groups"][1]["rules"]
    rule = next(r for r in rules if r.get("labels", {}).get("instance_type") == instance_type)
    return float(rule["expr"][len("vector(") : -1])


@pytest.mark.parametrize(
    ("utilization", "idle_cost"),
    [("0x30", True), ("70x30", False)],
    ids=["idle", "busy"],
)
def test_cost_rules_price_vm_gpus_by_their_instance_type_label(
    tmp_path, promtool, run, utilization, idle_cost
):
    price = _price("g5.xlarge")
    labels = {k: v for k, v in GPU.items()}
    case = {
        "interval": "1m",
        "input_series": [_series("DCGM_FI_DEV_GPU_UTIL", labels, utilization)],
        "promql_expr_test": [
            {
                "expr": GPU_COST_SERIES,
                "eval_time": "10m",
                "exp_samples": [{"labels": _labels(GPU_COST_SERIES, labels), "value": price}],
            },
            {
                "expr": GPU_IDLE_COST_SERIES,
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": _labels(GPU_IDLE_COST_SERIES, labels), "value": price if idle_cost else 0}
                ],
            },
        ],
    }
    _promtool_test(tmp_path, promtool, run, [case])


def test_cost_rules_price_kubernetes_gpus_through_their_node(tmp_path, promtool, run):
    per_gpu = _price("p5.48xlarge")
    node_labels = {
        "job": "kube-state-metrics",
        "node": "gpu-node-1",
        "label_node_kubernetes_io_instance_type": "p5.48xlarge",
    }
    other_gpu = {**K8S_GPU, "node": "gpu-node-2", "gpu": "0", "UUID": "GPU-9"}
    case = {
        "interval": "1m",
        "input_series": [
            _series("DCGM_FI_DEV_GPU_UTIL", K8S_GPU, "0x30"),
            _series("kube_node_labels", node_labels, "1x30"),
            # A GPU on a node whose instance type is unknown gets no price, not a wrong one.
            _series("DCGM_FI_DEV_GPU_UTIL", other_gpu, "0x30"),
        ],
        "promql_expr_test": [
            {
                "expr": f"sum({GPU_IDLE_COST_SERIES})",
                "eval_time": "10m",
                "exp_samples": [{"labels": "{}", "value": per_gpu}],
            },
            {
                "expr": GPU_IDLE_COST_SERIES,
                "eval_time": "10m",
                "exp_samples": [
                    {
                        "labels": _labels(GPU_IDLE_COST_SERIES, {**K8S_GPU, "instance_type": "p5.48xlarge"}),
                        "value": per_gpu,
                    }
                ],
            },
        ],
    }
    _promtool_test(tmp_path, promtool, run, [case])


def _labels(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


NODE = {"job": "node-exporter", "instance": "i-0abc", "node": "i-0abc", "directory": "/opt/models/llama-8b"}


def test_model_verification_failed_fires_at_once_on_the_verifier_gauge(tmp_path, promtool, run):
    rule = next(r for g in rule_groups() if g["name"] == WEIGHTS_GROUP for r in g["rules"])
    firing = {
        "exp_labels": {**NODE, **rule["labels"]},
        "exp_annotations": {k: _render(v, NODE, 1) for k, v in rule["annotations"].items()},
    }
    assert firing["exp_annotations"]["summary"] == "Model weights refused on i-0abc"
    assert "refused the weights in /opt/models/llama-8b" in firing["exp_annotations"]["description"]
    failed = _case(
        [_series("inference_model_verification_failed", NODE, "0 0 1x10")],
        [("1m", "ModelVerificationFailed", []), ("2m", "ModelVerificationFailed", [firing])],
    )
    verified = _case(
        [_series("inference_model_verification_failed", NODE, "0x30")],
        [("10m", "ModelVerificationFailed", [])],
    )
    _promtool_test(tmp_path, promtool, run, [failed, verified])
