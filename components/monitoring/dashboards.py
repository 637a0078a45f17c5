"""Grafana dashboards for GPU fleets, as plain dashboard JSON models.

Two dashboards, provisioned by `GpuObservability` as ConfigMaps that
Grafana's dashboard sidecar loads (and importable by hand anywhere else):

- GPU fleet: utilization, framebuffer memory and temperature per node and per
  GPU, with the alert thresholds drawn on the graphs.
- Idle accelerator cost: what idle GPUs cost per hour at the catalog's
  on-demand prices (the `inference_infra:*` recording rules of `rules.py`),
  by instance type and by node, and the GPUs the catalog has no price for.
- Serving cost: each pool's live USD per million tokens next to the planner's
  estimate for that pool, tokens/s and tokens per dollar, and GPU utilization
  against the 80% target (`serving_cost.py`).

The `node` label is the machine (Kubernetes node, EC2 instance id, GCE
instance name); the datasource is a variable so the JSON imports anywhere.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

from inference_infra.components.monitoring.rules import (
    DCGM_JOB,
    GPU_COST_SERIES,
    GPU_IDLE_COST_SERIES,
    RuleSettings,
)
from inference_infra.components.monitoring.serving_cost import (
    POOL_PLANNED_SERIES,
    POOL_TOKENS_PER_USD_SERIES,
    POOL_TOKENS_SERIES,
    POOL_USD_PER_MTOK_SERIES,
)
from inference_infra.components.units import HOURS_PER_MONTH

SERVING_COST_UID = "inference-infra-serving-cost"
# inference-infra default: the dashboards' target line; a serving GPU below it is worth consolidating.
GPU_UTILIZATION_TARGET_PERCENT = 80
FLEET_UID = "inference-infra-gpu-fleet"
COST_UID = "inference-infra-idle-cost"
_DS = {"type": "prometheus", "uid": "${datasource}"}
_NODE = 'node=~"$node"'


def gpu_fleet_dashboard(settings: RuleSettings | None = None, *, neuron: bool = False) -> dict[str, Any]:
    t = (settings or RuleSettings()).thresholds
    util = f"DCGM_FI_DEV_GPU_UTIL{{{_NODE}}}"
    fb_used, fb_free = f"DCGM_FI_DEV_FB_USED{{{_NODE}}}", f"DCGM_FI_DEV_FB_FREE{{{_NODE}}}"
    smoothed = f"avg_over_time({util}[{t.smoothing_minutes}m])"
    ids = count(1)
    panels = [
        _stat(next(ids), "GPUs reporting", f"count({util})", (0, 0, 4), unit="none"),
        _stat(next(ids), "Fleet utilization", f"avg({util})", (4, 0, 4), unit="percent"),
        _stat(
            next(ids),
            f"Idle GPUs (< {t.idle_utilization_percent:g}% over {t.smoothing_minutes}m)",
            f"count({smoothed} < {t.idle_utilization_percent:g}) or vector(0)",
            (8, 0, 4),
            unit="none",
            red_from=1,
        ),
        _stat(
            next(ids),
            "Framebuffer in use",
            f"100 * sum({fb_used}) / (sum({fb_used}) + sum({fb_free}))",
            (12, 0, 4),
            unit="percent",
            red_from=t.memory_used_percent,
        ),
        _stat(
            next(ids),
            "GPUs with XID errors",
            f"count(DCGM_FI_DEV_XID_ERRORS{{{_NODE}}} > 0) or vector(0)",
            (16, 0, 4),
            unit="none",
            red_from=1,
        ),
        _stat(
            next(ids),
            "dcgm-exporters down",
            f'count(up{{job="{DCGM_JOB}"}} == 0) or vector(0)',
            (20, 0, 4),
            unit="none",
            red_from=1,
        ),
        _series(
            next(ids),
            "GPU utilization per node",
            [(f"avg by (node) ({util})", "{{node}}")],
            (0, 4, 12),
            unit="percent",
            lines=(t.idle_utilization_percent, t.saturated_utilization_percent),
        ),
        _series(
            next(ids),
            "GPU utilization per GPU",
            [(util, "{{node}} gpu {{gpu}}")],
            (12, 4, 12),
            unit="percent",
            lines=(t.idle_utilization_percent, t.saturated_utilization_percent),
        ),
        _series(
            next(ids),
            "Framebuffer used per node",
            [(f"sum by (node) ({fb_used}) * 1048576", "{{node}}")],  # MiB -> bytes
            (0, 12, 12),
            unit="bytes",
        ),
        _series(
            next(ids),
            "Framebuffer used per GPU",
            [(f"100 * {fb_used} / ({fb_used} + {fb_free})", "{{node}} gpu {{gpu}}")],
            (12, 12, 12),
            unit="percent",
            lines=(t.memory_used_percent,),
        ),
        _series(
            next(ids),
            "Temperature per GPU",
            [(f"DCGM_FI_DEV_GPU_TEMP{{{_NODE}}}", "{{node}} gpu {{gpu}}")],
            (0, 20, 12),
            unit="celsius",
            lines=(t.temperature_celsius,),
        ),
        _series(
            next(ids),
            "Power draw per GPU",
            [(f"DCGM_FI_DEV_POWER_USAGE{{{_NODE}}}", "{{node}} gpu {{gpu}}")],
            (12, 20, 12),
            unit="watt",
        ),
    ]
    if neuron:
        panels.append(
            _series(
                next(ids),
                "NeuronCore utilization per node (neuron-monitor)",
                [("100 * avg by (instance_id) (neuroncore_utilization_ratio)", "{{instance_id}}")],
                (0, 28, 24),
                unit="percent",
            )
        )
    return _dashboard(FLEET_UID, "GPU fleet utilization", panels, node_metric="DCGM_FI_DEV_GPU_UTIL")


def idle_cost_dashboard(settings: RuleSettings | None = None) -> dict[str, Any]:
    t = (settings or RuleSettings()).thresholds
    idle, cost = f"{GPU_IDLE_COST_SERIES}{{{_NODE}}}", f"{GPU_COST_SERIES}{{{_NODE}}}"
    ids = count(1)
    panels = [
        _stat(
            next(ids), "Idle GPU cost per hour", f"sum({idle}) or vector(0)", (0, 0, 6), unit="currencyUSD"
        ),
        _stat(
            next(ids),
            "Idle GPU cost per month at this rate",
            f"{HOURS_PER_MONTH} * (sum({idle}) or vector(0))",
            (6, 0, 6),
            unit="currencyUSD",
        ),
        _stat(
            next(ids), "GPU fleet cost per hour", f"sum({cost}) or vector(0)", (12, 0, 6), unit="currencyUSD"
        ),
        _stat(
            next(ids),
            "Share of GPU spend idle",
            f"100 * sum({idle}) / sum({cost})",
            (18, 0, 6),
            unit="percent",
            red_from=t.idle_utilization_percent,
        ),
        _series(
            next(ids),
            "Idle GPU cost per hour by instance type",
            [(f"sum by (instance_type) ({idle})", "{{instance_type}}")],
            (0, 4, 12),
            unit="currencyUSD",
            stacked=True,
        ),
        _series(
            next(ids),
            "Idle GPU cost per hour by node",
            [(f"sum by (node, instance_type) ({idle}) > 0", "{{node}} ({{instance_type}})")],
            (12, 4, 12),
            unit="currencyUSD",
            stacked=True,
        ),
        _stat(
            next(ids),
            "GPUs without a catalog price",
            f"count(DCGM_FI_DEV_GPU_UTIL{{{_NODE}}}) - (count({cost}) or vector(0))",
            (0, 12, 24),
            unit="none",
            red_from=1,
            description="GPUs whose instance type is missing from the catalog or unknown (no instance_type "
            "label on a VM, no kube_node_labels on Kubernetes): they are left out of the costs above.",
        ),
    ]
    dashboard = _dashboard(COST_UID, "Idle accelerator cost", panels, node_metric=GPU_COST_SERIES)
    dashboard["description"] = (
        "On-demand list prices from the inference-infra catalog, per GPU. Spot and reserved capacity cost "
        f"less. A GPU counts as idle when its utilization averaged over {t.smoothing_minutes}m is below "
        f"{t.idle_utilization_percent:g}%."
    )
    return dashboard


def serving_cost_dashboard() -> dict[str, Any]:
    ids = count(1)
    panels = [
        _series(
            next(ids),
            "USD per million tokens: live vs planned, per pool",
            [
                (f"{POOL_USD_PER_MTOK_SERIES}", "{{pool}} live"),
                (f"{POOL_PLANNED_SERIES}", "{{pool}} planned"),
            ],
            (0, 0, 12),
            unit="currencyUSD",
        ),
        _series(
            next(ids),
            "Generated tokens per second, per pool",
            [(POOL_TOKENS_SERIES, "{{pool}}")],
            (12, 0, 12),
            unit="none",
        ),
        _series(
            next(ids),
            "Tokens per dollar, per pool",
            [(POOL_TOKENS_PER_USD_SERIES, "{{pool}}")],
            (0, 8, 12),
            unit="none",
        ),
        _series(
            next(ids),
            f"GPU utilization vs the {GPU_UTILIZATION_TARGET_PERCENT}% target, per pool",
            [(f'avg by (pool) (DCGM_FI_DEV_GPU_UTIL{{job="{DCGM_JOB}"}})', "{{pool}}")],
            (12, 8, 12),
            unit="percent",
            lines=(GPU_UTILIZATION_TARGET_PERCENT,),
        ),
    ]
    dashboard = _dashboard(SERVING_COST_UID, "Serving cost", panels, node_metric=POOL_TOKENS_SERIES)
    dashboard["description"] = (
        "Live cost per million generated tokens: each pool's catalog on-demand price (as the plan prices it) "
        "over its measured vLLM token rate, next to the capacity planner's estimate for the pool."
    )
    return dashboard


def dashboards(settings: RuleSettings | None = None, *, neuron: bool = False) -> dict[str, dict[str, Any]]:
    """File name -> dashboard JSON model."""
    return {
        f"{FLEET_UID}.json": gpu_fleet_dashboard(settings, neuron=neuron),
        f"{COST_UID}.json": idle_cost_dashboard(settings),
        f"{SERVING_COST_UID}.json": serving_cost_dashboard(),
    }


def to_json(dashboard: dict[str, Any]) -> str:
    return json.dumps(dashboard, indent=2, sort_keys=True)


# -- building blocks -----------------------------------------------------------------------------


def _dashboard(uid: str, title: str, panels: list[dict[str, Any]], *, node_metric: str) -> dict[str, Any]:
    return {
        "uid": uid,
        "title": title,
        "tags": ["inference-infra", "gpu"],
        "timezone": "utc",
        "schemaVersion": 39,
        "version": 1,
        "editable": False,
        "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "hide": 0,
                },
                {
                    "name": "node",
                    "label": "Node",
                    "type": "query",
                    "datasource": _DS,
                    "query": {"query": f"label_values({node_metric}, node)", "refId": "node"},
                    "definition": f"label_values({node_metric}, node)",
                    "refresh": 2,
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "current": {"text": "All", "value": "$__all"},
                    "sort": 1,
                },
            ]
        },
        "panels": panels,
    }


def _grid(pos: tuple[int, int, int], height: int) -> dict[str, int]:
    x, y, w = pos
    return {"x": x, "y": y, "w": w, "h": height}


def _target(expr: str, legend: str = "", ref: str = "A") -> dict[str, Any]:
    return {"datasource": _DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def _stat(
    panel_id: int,
    title: str,
    expr: str,
    pos: tuple[int, int, int],
    *,
    unit: str,
    red_from: float | None = None,
    description: str = "",
) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
    if red_from is not None:
        steps.append({"color": "red", "value": red_from})
    return {
        "id": panel_id,
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": _DS,
        "gridPos": _grid(pos, 4),
        "targets": [_target(expr)],
        "fieldConfig": {
            "defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
            "overrides": [],
        },
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}},
    }


def _series(
    panel_id: int,
    title: str,
    queries: list[tuple[str, str]],
    pos: tuple[int, int, int],
    *,
    unit: str,
    lines: tuple[float, ...] = (),
    stacked: bool = False,
) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "transparent", "value": None}]
    steps += [{"color": "red", "value": v} for v in lines]
    custom: dict[str, Any] = {"thresholdsStyle": {"mode": "dashed" if lines else "off"}, "fillOpacity": 10}
    if stacked:
        custom["stacking"] = {"mode": "normal", "group": "A"}
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "datasource": _DS,
        "gridPos": _grid(pos, 8),
        "targets": [_target(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(queries)],
        "fieldConfig": {
            "defaults": {"unit": unit, "custom": custom, "thresholds": {"mode": "absolute", "steps": steps}},
            "overrides": [],
        },
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
    }
