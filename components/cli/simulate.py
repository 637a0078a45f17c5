"""`inference-infra simulate`: replay a request trace against an elastic pool's scaling.

The pool comes from a stack file (`--stack NAME --pool NAME`: the fleet's model, machine, peak counts
and `elastic:` block, read from `Pulumi.<stack>.yaml` without running the program), from the stack's
program (`--cwd PROGRAM --stack NAME --pool NAME` when the stack file lists no fleets, or
`--from-program`: the program runs offline and the fleet it registers hands over its plan) or from
flags (`--model`, `--machine`, `--peak`, ...). Flags for the scaling settings override the stack's,
so a change can be tried before it is made; `--tune` searches them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import click

from inference_infra.components import input_size
from inference_infra.components.cli import app
from inference_infra.components.cli.choices import PurchaseChoice, price_model_of

_QUANTS = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"]
# The stack's fleet lists a pool may come from: (key, cloud, machine key). TPU VMs are never elastic.
_FLEET_LISTS = (
    ("awsGpuFleets", "aws", "instanceType"),
    ("awsInferentiaFleets", "aws", "instanceType"),
    ("gcpGpuFleets", "gcp", "machineType"),
)
_NOT_ELASTIC = ("tpuVms",)


@app.command()
@click.option(
    "--trace",
    "trace_path",
    required=True,
    type=click.Path(path_type=Path),
    help="CSV of TIMESTAMP,ContextTokens,GeneratedTokens (the Azure LLM inference trace format).",
)
@click.option("--stack", "-s", help="Read the pool from Pulumi.<stack>.yaml (with --pool).")
@click.option("--pool", "pool_name", help="The fleet (pool) of --stack to replay, by its name.")
@click.option(
    "--cwd",
    type=click.Path(path_type=Path),
    default=Path("."),
    help="Folder of the Pulumi project (--stack): its stack file, and its program for a pool defined in "
    "Python.",
)
@click.option(
    "--from-program",
    is_flag=True,
    help="Run the stack's program offline (as `plan` does) and replay the pool it registers as --pool "
    "(a pool defined in Python). Without it the pool is read from the stack file's fleets, and the "
    "program runs only when the stack file lists none.",
)
@click.option("--model", help="Without --stack: the model preset the pool serves, e.g. llama-3.1-8b.")
@click.option("--machine", help="Without --stack: the instance type (default: the planner's NVIDIA pick).")
@click.option("--context", type=int, help="Without --stack: --max-model-len, prompt + output tokens.")
@click.option("--concurrency", type=int, help="Without --stack: sequences in flight per machine.")
@click.option("--quant", type=click.Choice(_QUANTS, case_sensitive=False), help="Weight format (bf16).")
@click.option("--kv-quant", type=click.Choice(_QUANTS, case_sensitive=False), help="KV-cache format.")
@click.option(
    "--peak",
    help="Without --stack, required: the fleet's peak machines (max and floor derive from it), or "
    "'trace' for what the trace's busiest minute needs with perfect foresight (a look-ahead: said so).",
)
@click.option("--cloud", type=click.Choice(["aws", "gcp"]), help="Without --stack: the machine's cloud.")
@click.option(
    "--latency",
    type=click.Choice(["interactive", "batch"]),
    help="The pool's SLO class: its TTFT target (default: the stack's, else interactive).",
)
@click.option("--min-size", type=int, help="Override elastic min_size.")
@click.option("--max-size", type=int, help="Override elastic max_size.")
@click.option("--floor-share", type=float, help="Override elastic floor_share.")
@click.option("--target-utilisation", type=float, help="Override elastic target_utilisation.")
@click.option("--scale-out-cooldown", type=int, help="Override elastic scale_out_cooldown_seconds.")
@click.option("--scale-in-cooldown", type=int, help="Override elastic scale_in_cooldown_seconds.")
@click.option("--warm-pool", type=int, help="Override elastic warm_pool_size.")
@click.option(
    "--fast-scale-out",
    type=float,
    help="Override elastic fast_scale_out_ratio: AWS scales out after one datapoint at this multiple "
    "of the target (1-2; 0: off, target tracking alone).",
)
@click.option(
    "--scale-in-sizing",
    type=click.Choice(["deficit", "share"]),
    help="Override elastic scale_in_sizing: AWS lets go, each quiet minute, the share of the group the "
    "load is under the scale-in threshold (deficit), or --scale-in-share a cooldown apart (share).",
)
@click.option(
    "--period", type=int, help="Seconds per load datapoint of the autoscaler (default: the plan's, 60)."
)
@click.option(
    "--metric-lag",
    type=int,
    help="Seconds a datapoint reaches the autoscaler after its period ends (default: the plan's, 60).",
)
@click.option(
    "--scale-out-periods",
    type=int,
    help="AWS: datapoints in a row above the target before a scale-out (default: the plan's, 3).",
)
@click.option(
    "--scale-in-headroom",
    type=float,
    help="AWS: scale in only while the machines left would run under this share of the target "
    "(default: the plan's, 0.8).",
)
@click.option(
    "--scale-in-share",
    type=float,
    help="Share of the group one scale-in removes, a whole percent up to 0.9, at least one machine "
    "(default: the plan's elastic.scale_in_share).",
)
@click.option(
    "--stabilisation",
    type=int,
    help="GCP: seconds of recommendations a scale-in keeps the largest of (default: 600).",
)
@click.option(
    "--interruptions-per-hour",
    type=float,
    help="Spot reclaims per machine-hour (default: 0; with --purchase spot, the catalog's band).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the spot interruptions' draws.")
@click.option(
    "--cold-start",
    "cold_start",
    type=click.Choice(["fastest", "typical", "slowest"]),
    default="typical",
    show_default=True,
    help="Which end of the cold-start estimate's range a new machine takes (serving.cold_start).",
)
@click.option(
    "--kubernetes",
    type=click.Choice(["cluster-autoscaler", "karpenter"]),
    help="Replay the pool on Kubernetes with this node autoscaler: a pod on a node with room starts "
    "without a machine boot, one that needs a node waits for it (simulate.k8s_nodes).",
)
@click.option(
    "--pods-per-node", type=int, default=1, show_default=True, help="With --kubernetes: pods one node holds."
)
@click.option(
    "--scale-down-after",
    type=float,
    help="With --kubernetes: seconds an empty node stays (default: the autoscaler's, 600 or 0).",
)
@click.option(
    "--start-size",
    type=int,
    help="Machines serving when the trace starts (default: the pool's minimum, its desired size).",
)
@click.option(
    "--tune",
    is_flag=True,
    help="Search target utilisation, warm pool, minimum, scale-in share, sizing and quiet time and (AWS) "
    "the fast scale-out for the cheapest settings that keep at most 1% of requests over the TTFT target "
    "on this trace; print the frontier, the SLO floor (the lowest minimum any setting can keep the SLO "
    "from), how many of the best setting's neighbours keep it too, and the robust pick: the cheapest "
    "setting whose neighbours all keep it.",
)
@click.option(
    "--validate",
    "validate_path",
    type=click.Path(path_type=Path),
    help="With --tune: replay the best setting, the robust pick and the pool's own settings on this "
    "other trace (another day, a later hour), each against that trace's own oracle: whether what "
    "--tune found is a margin or an answer about one trace.",
)
@click.option(
    "--validate-scale",
    type=int,
    help="With --validate: replay each of its requests this many times (default: --scale).",
)
@click.option(
    "--scale",
    "copies",
    type=int,
    default=1,
    show_default=True,
    help="Replay each request this many times at its own time: the same shape at N times the volume.",
)
@click.option(
    "--purchase",
    type=PurchaseChoice(),
    default="on-demand",
    show_default=True,
    help="Price model of a machine-hour: a capacity mode (preemptible is priced as spot).",
)
@click.option("--region", help="Price region (default: the stack's, else the catalog's reference).")
@click.option("--usd-per-hour", type=float, help="Price one machine-hour at this figure instead.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (fields: docs/reference.md).")
@click.option(
    "--plot",
    type=click.Path(path_type=Path),
    help="Write load, capacity and queue over time to this .svg (or .png with the 'plot' extra).",
)
def simulate(**options: Any) -> None:
    """Replay a request trace against a pool's scaling, starting at its minimum: whether more than 1% of
    requests missed the pool's time-to-first-token target (said first), cost against an SLO-aware oracle
    (perfect foresight, no cold start, the fewest machines each minute that keep every request on
    time), a lower bound and a static fleet, time to scale and the queue over time."""
    from inference_infra.components.errors import InputError
    from inference_infra.components.simulate import read_trace, render_svg, replay

    o = options
    _check_flags(o)
    try:
        trace = read_trace(o["trace_path"])
    except InputError as e:
        raise InputError(f"--{e}", e.problems) from None
    if o["copies"] != 1:
        trace = trace.scaled(o["copies"])
    held_out = _held_out(o)
    pool = _stack_pool(o, trace) if o["stack"] else _flag_pool(o, trace)
    if o["start_size"] is not None and not 0 <= o["start_size"] <= pool.plan.max_size:
        raise InputError(
            f"--start-size {o['start_size']} must be 0..max_size ({pool.plan.max_size}) of pool "
            f"{pool.name!r}."
        )
    if o["kubernetes"] is not None:
        pool = _on_kubernetes(o, pool)
    scaler = _scaler(o, pool)
    if o["tune"]:
        from inference_infra.components.simulate.tune import tune, validate

        found = tune(trace, pool, scaler)
        doc = found.as_json()
        checked = validate(found, held_out, pool, scaler) if held_out is not None else None
        if checked is not None:
            doc["validation"] = checked.as_json()
        if o["plot"] is not None:
            _write_frontier_plot(o["plot"], doc)
        if o["as_json"]:
            json.dump(doc, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(found.table() + (checked.table() if checked is not None else ""))
        return
    result = replay(trace, pool, scaler).as_json()
    if o["plot"] is not None:
        _write_plot(o["plot"], result, render_svg)
    if o["as_json"]:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_table(result))


def _held_out(o: Mapping[str, Any]) -> Any:
    """--validate's trace at --validate-scale (default --scale), read before anything is replayed."""
    from inference_infra.components.errors import InputError
    from inference_infra.components.simulate import read_trace

    if o["validate_path"] is None:
        return None
    try:
        held_out = read_trace(o["validate_path"])
    except InputError as e:
        # the trace's own message, naming the file, line and value, under the flag that gave it
        text = str(e)
        raise InputError(
            f"--validate {text[len('trace ') :] if text.startswith('trace ') else text}", e.problems
        ) from None
    copies = o["validate_scale"] if o["validate_scale"] is not None else o["copies"]
    return held_out.scaled(copies)


def _on_kubernetes(o: Mapping[str, Any], pool: Any) -> Any:
    """--kubernetes: the pool's pods start on nodes with room, or wait for a node (simulate.k8s_nodes)."""
    from inference_infra.components.errors import InputError
    from inference_infra.components.serving.cold_start import NodeAutoscaler
    from inference_infra.components.simulate.k8s_nodes import kubernetes_nodes_for, on_kubernetes

    if o["pods_per_node"] < 1:
        raise InputError(f"--pods-per-node {o['pods_per_node']} must be a whole number of at least 1.")
    delay = o["scale_down_after"]
    if delay is not None and not 0 <= delay <= 86400:
        raise InputError(f"--scale-down-after {delay:g} must be 0..86400 seconds.")
    nodes = kubernetes_nodes_for(
        pool,
        which=o["cold_start"],
        autoscaler=NodeAutoscaler(o["kubernetes"]),
        pods_per_node=o["pods_per_node"],
        scale_down_after_seconds=delay,
    )
    return on_kubernetes(pool, nodes)


def _scaler(o: Mapping[str, Any], pool: Any) -> Any:
    """The replay's autoscaler: the pool's plan read by `simulate.scaler_settings`, flags over it."""
    from inference_infra.components.catalog import find_instance_type
    from inference_infra.components.simulate.settings import scaler_settings
    from inference_infra.components.simulate.spot import interruption_rate

    instance = find_instance_type(pool.service.machine)
    cloud = instance.cloud.value if instance is not None else "aws"
    if pool.nodes is not None:
        cloud = "kubernetes"  # the pod autoscaler (KEDA's HPA), not the cloud's group
    rate = o["interruptions_per_hour"]
    basis = "--interruptions-per-hour" if rate is not None else ""
    if rate is None and o["purchase"] == "spot":
        rate, basis = interruption_rate(pool.service.machine, o["region"] or pool.region)
    return scaler_settings(
        pool.plan,
        cloud=cloud,
        period_seconds=o["period"],
        metric_lag_seconds=o["metric_lag"],
        scale_out_periods=o["scale_out_periods"],
        scale_in_headroom=o["scale_in_headroom"],
        scale_in_share=o["scale_in_share"],
        stabilisation_seconds=o["stabilisation"],
        start_size=o["start_size"],
        interruptions_per_machine_hour=rate,
        interruption_basis=basis,
        seed=o["seed"],
    )


def _check_flags(o: Mapping[str, Any]) -> None:
    from inference_infra.components.errors import InputError

    positive = {
        "--period": o["period"],
        "--scale-out-periods": o["scale_out_periods"],
        "--scale": o["copies"],
    }
    for flag, value in positive.items():
        if value is not None and value < 1:
            raise InputError(f"{flag} {value} must be a whole number of at least 1.")
    for flag, value in (("--metric-lag", o["metric_lag"]), ("--stabilisation", o["stabilisation"])):
        if value is not None and not 0 <= value <= 3600:
            raise InputError(f"{flag} {value} must be 0..3600 seconds.")
    if o["scale_in_headroom"] is not None and not 0 < o["scale_in_headroom"] <= 1:
        raise InputError(f"--scale-in-headroom {o['scale_in_headroom']:g} must be above 0 and at most 1.")
    from inference_infra.components.fleet.elastic import MAX_FAST_SCALE_OUT_RATIO, MAX_SCALE_IN_SHARE

    fast = o["fast_scale_out"]
    if fast is not None and not (fast == 0 or 1 <= fast <= MAX_FAST_SCALE_OUT_RATIO):
        raise InputError(
            f"--fast-scale-out {fast:g} must be 0 (off) or 1..{MAX_FAST_SCALE_OUT_RATIO:g}: the multiple of "
            "the target per machine at which AWS scales out after one datapoint."
        )
    share = o["scale_in_share"]
    if share is not None and not (
        0 <= share <= MAX_SCALE_IN_SHARE and abs(share * 100 - round(share * 100)) < 1e-6
    ):
        raise InputError(
            f"--scale-in-share {share:g} must be a whole percent in 0..{MAX_SCALE_IN_SHARE:g} (0: one "
            "machine a time), as the clouds' scale-in policies take it."
        )
    rate = o["interruptions_per_hour"]
    if rate is not None and not 0 <= rate <= 1:
        raise InputError(f"--interruptions-per-hour {rate:g} must be 0..1 reclaims per machine-hour.")
    if o["validate_path"] is not None and not o["tune"]:
        raise InputError(
            f"--validate {str(o['validate_path'])!r} replays what --tune finds on another trace: add --tune "
            "(to replay settings on a trace, pass it as --trace)."
        )
    if o["validate_scale"] is not None and o["validate_path"] is None:
        raise InputError(
            f"--validate-scale {o['validate_scale']} scales --validate's trace: add --validate TRACE."
        )
    if o["validate_scale"] is not None and o["validate_scale"] < 1:
        raise InputError(f"--validate-scale {o['validate_scale']} must be a whole number of at least 1.")
    if o["tune"] and o["start_size"] is not None:
        raise InputError("--tune searches the minimum the pool starts at: drop --start-size.")
    if o["tune"] and o["plot"] is not None and o["plot"].suffix.lower() != ".svg":
        raise InputError(f"--plot {str(o['plot'])!r}: with --tune the frontier is drawn as .svg only.")
    if o["usd_per_hour"] is not None and o["usd_per_hour"] < 0:
        raise InputError(f"--usd-per-hour {o['usd_per_hour']:g} must be 0 or more (USD per machine-hour).")
    if o["plot"] is not None and o["plot"].suffix.lower() not in (".svg", ".png"):
        raise InputError(f"--plot {str(o['plot'])!r} must end in .svg or .png (the format is taken from it).")
    model_flags = ("model", "machine", "context", "concurrency", "quant", "kv_quant", "peak", "cloud")
    if o["stack"]:
        if not o["pool_name"]:
            raise InputError(f"--stack {o['stack']!r} needs --pool NAME: which of its fleets to replay.")
        given = [f"--{name.replace('_', '-')}" for name in model_flags if o[name] is not None]
        if given:
            raise InputError(
                f"{', '.join(given)} describe a pool without a stack; with --stack the pool's model, machine "
                "and counts are the stack's: drop one or the other (scaling flags such as --min-size may "
                "override the stack's)."
            )
        return
    if o["pool_name"]:
        raise InputError(f"--pool {o['pool_name']!r} names a fleet of a stack: it needs --stack NAME.")
    if o["from_program"]:
        raise InputError("--from-program runs a stack's program: it needs --stack NAME --pool NAME.")
    peak = o["peak"]
    if peak is not None and peak != "trace" and not (peak.isdigit() and int(peak) >= 1):
        raise InputError(
            f"--peak {peak!r} must be a whole number of machines of at least 1, or 'trace' (the trace's "
            "busiest minute with perfect foresight)."
        )
    missing = [
        flag
        for flag, name in (
            ("--model", "model"),
            ("--context", "context"),
            ("--concurrency", "concurrency"),
            ("--peak", "peak"),
        )
        if o[name] is None
    ]
    if missing:
        raise InputError(
            f"simulate needs a pool: --stack NAME --pool NAME, or --model with --context, --concurrency "
            f"and --peak (machines, or 'trace' to size it from the trace: a look-ahead) (missing "
            f"{', '.join(missing)})."
        )


def _elastic_overrides(o: Mapping[str, Any]) -> dict[str, Any]:
    names = {
        "min_size": "min_size",
        "max_size": "max_size",
        "floor_share": "floor_share",
        "target_utilisation": "target_utilisation",
        "scale_out_cooldown_seconds": "scale_out_cooldown",
        "scale_in_cooldown_seconds": "scale_in_cooldown",
        "scale_in_share": "scale_in_share",
        "warm_pool_size": "warm_pool",
        "fast_scale_out_ratio": "fast_scale_out",
        "scale_in_sizing": "scale_in_sizing",
    }
    return {field: o[option] for field, option in names.items() if o[option] is not None}


def _flag_pool(o: Mapping[str, Any], trace: Any) -> Any:
    from inference_infra.components.catalog import PriceModel
    from inference_infra.components.errors import InputError
    from inference_infra.components.fleet.elastic import ElasticArgs
    from inference_infra.components.planner import Quantization
    from inference_infra.components.serving.model import ServedModel
    from inference_infra.components.simulate import build_pool
    from inference_infra.components.simulate.pool import peak_for_trace

    model = ServedModel(
        name=o["model"],
        context_tokens=o["context"],
        concurrency=o["concurrency"],
        quantization=Quantization(o["quant"].lower()) if o["quant"] else Quantization.BF16,
        kv_cache_quantization=Quantization(o["kv_quant"].lower()) if o["kv_quant"] else None,
    )
    elastic = ElasticArgs(**_elastic_overrides(o))
    peak = o["peak"]
    notes = []
    try:
        if peak == "trace":
            peak = peak_for_trace(
                model=model,
                machine=o["machine"],
                cloud=o["cloud"],
                trace=trace,
                latency=o["latency"] or "interactive",
            )
            notes.append(
                f"--peak trace: the peak ({peak}) was read from the trace replayed, a look-ahead no "
                "deployed pool has"
            )
        pool = build_pool(
            name=o["model"],
            model=model,
            machine=o["machine"],
            peak=int(peak),
            trace=trace,
            elastic=elastic,
            cloud=o["cloud"],
            latency=o["latency"] or "interactive",
            warm_pool=(o["cloud"] or "aws") == "aws" and _purchase(o["purchase"]) is not PriceModel.SPOT,
            region=o["region"],
            purchase=_purchase(o["purchase"]),
            usd_per_hour=o["usd_per_hour"],
            cold_start=o["cold_start"],
        )
    except InputError as e:
        raise InputError(_flag_names(str(e)), e.problems) from None
    return replace(pool, plan=replace(pool.plan, notes=(*pool.plan.notes, *notes)))


def _flag_names(message: str) -> str:
    """The pool's input names as the flags that set them."""
    for name, flag in {
        "model.name": "--model",
        "model.context_tokens": "--context",
        "model.concurrency": "--concurrency",
        "elastic.min_size": "--min-size",
        "elastic.max_size": "--max-size",
        "elastic.floor_share": "--floor-share",
        "elastic.target_utilisation": "--target-utilisation",
        "elastic.scale_out_cooldown_seconds": "--scale-out-cooldown",
        "elastic.scale_in_cooldown_seconds": "--scale-in-cooldown",
        "elastic.scale_in_share": "--scale-in-share",
        "elastic.warm_pool_size": "--warm-pool",
        "elastic.fast_scale_out_ratio": "--fast-scale-out",
        "elastic.scale_in_sizing": "--scale-in-sizing",
        "elastic": "--peak",
        "machine": "--machine",
        "model": "--model",
    }.items():
        # a problem's input name, followed by its value (`machine 'g9.huge' ...`, `elastic 0 ...`)
        message = re.sub(rf"(?<![\w.-]){re.escape(name)}(?= ['\d(-])", flag, message)
    return message


def _purchase(name: str) -> Any:
    return price_model_of(name)


# --- a pool from the stack file ---------------------------------------------------------------------


def _stack_pool(o: Mapping[str, Any], trace: Any) -> Any:
    from inference_infra.components.catalog import Cloud
    from inference_infra.components.errors import InputError, close_matches
    from inference_infra.components.fleet import CapacityArgs
    from inference_infra.components.fleet.elastic import ElasticArgs, ScheduleArgs
    from inference_infra.components.offline_plan.project import load_project, load_stack
    from inference_infra.components.planner import Quantization
    from inference_infra.components.serving.model import ServedModel
    from inference_infra.components.simulate import build_pool

    project = load_project(o["cwd"])
    stack = load_stack(project, o["stack"])
    ns = f"{project.name}:"
    values = {k[len(ns) :]: _decode(v) for k, v in stack.values.items() if k.startswith(ns)}
    file = stack.path.name
    name = o["pool_name"]
    found = None
    pools: list[str] = []
    for key, cloud, machine_key in _FLEET_LISTS:
        for i, item in enumerate(values.get(key) or []):
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                pools.append(item["name"])
                if item["name"] == name:
                    found = (f"{ns}{key}[{i}]", cloud, machine_key, item)
    for key in _NOT_ELASTIC:
        for item in values.get(key) or []:
            if isinstance(item, Mapping) and item.get("name") == name:
                raise InputError(
                    f"--pool {name!r} is a TPU VM of {file} ({ns}{key}); TPU VMs cannot join a managed "
                    "instance group, so they are never elastic: replay a GPU or Inferentia pool."
                )
    if o["from_program"] or (found is None and not pools):
        # the program defines its pools in Python: run it offline and read them
        return _program_pool(o, trace, project, stack, file, pools)
    if found is None:
        near = close_matches(name, pools)
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
        raise InputError(
            f"--pool {name!r} is not a fleet of {file}{hint}; its pools: {', '.join(pools)}. A pool the "
            "program defines in Python: add --from-program."
        )
    where, cloud, machine_key, item = found
    if not isinstance(item.get("model"), Mapping):
        raise InputError(
            f"--pool {name!r}: {file} {where} has no model, so it serves nothing to replay; give it "
            f"`model:` (name, contextTokens, concurrency)."
        )
    model = _dataclass(ServedModel, item["model"], f"{file} {where}.model")
    model = replace(
        model,
        quantization=Quantization(str(model.quantization).lower()),
        kv_cache_quantization=Quantization(str(model.kv_cache_quantization).lower())
        if model.kv_cache_quantization
        else None,
    )
    counts_in = {
        k: item[k] for k in ("reserved", "spot", "onDemand", "preemptible", "count", "maxSpot") if k in item
    }
    capacity = _dataclass(CapacityArgs, counts_in, f"{file} {where}")
    if "capacityOrder" in item:
        from inference_infra.components.fleet import CapacityMode

        capacity = replace(capacity, capacity_order=tuple(CapacityMode(m) for m in item["capacityOrder"]))
    reservation = item.get("reservation") or {}
    slots = int(reservation.get("instanceCount", 0)) if isinstance(reservation, Mapping) else 0
    counts, _ = capacity.counts(slots)
    elastic_in = item.get("elastic")
    notes = []
    if isinstance(elastic_in, Mapping):
        raw = dict(elastic_in)
        schedule = raw.pop("schedule", None)
        elastic = _dataclass(ElasticArgs, raw, f"{file} {where}.elastic")
        if isinstance(schedule, Mapping):
            elastic = replace(
                elastic, schedule=_dataclass(ScheduleArgs, schedule, f"{file} {where}.elastic.schedule")
            )
    else:
        elastic = ElasticArgs()
        notes.append(
            f"pool {name!r} has no elastic: block in {file}; replayed with the default elastic settings"
        )
    elastic = replace(elastic, **_elastic_overrides(o))
    region_key = "aws:region" if cloud == "aws" else "gcp:region"
    region = o["region"] or _decode(stack.values.get(region_key)) or None
    pool = build_pool(
        name=name,
        model=model,
        machine=item.get(machine_key),
        peak=counts.total,
        trace=trace,
        elastic=elastic,
        cloud=Cloud(cloud),
        latency=o["latency"] or item.get("latency", "interactive"),
        reserved=counts.reserved,
        warm_pool=cloud == "aws" and counts.spot == 0,
        region=region,
        purchase=_purchase(o["purchase"]),
        usd_per_hour=o["usd_per_hour"],
        key=f"{file} {where}",
        budget_hourly_usd=_stack_budget(project.root, o["stack"]),
        cold_start=o["cold_start"],
    )
    return replace(pool, plan=replace(pool.plan, notes=(*pool.plan.notes, *notes)))


_PROGRAM_FLEETS = (
    "inference-infra:aws:GpuFleet",
    "inference-infra:aws:InferentiaFleet",
    "inference-infra:gcp:GpuFleet",
    # a Kubernetes pool hands over the same: scaling_plan, serving, instance_type (its plan's machine)
    "inference-infra:k8s:KubernetesServingPool",
)


def _program_pool(
    o: Mapping[str, Any], trace: Any, project: Any, stack: Any, file: str, listed: list[str]
) -> Any:
    """The pool `--pool` as the stack's program builds it: the program runs offline (the `plan`
    harness, components/offline_plan) and the fleet it registers under that name hands over the
    ScalingPlan and cold start it planned; they are replayed as they are."""
    from inference_infra.components.catalog import Cloud, find_instance_type
    from inference_infra.components.errors import InputError, close_matches
    from inference_infra.components.offline_plan import capture_stack
    from inference_infra.components.simulate.pool import pool_from_plan

    name = o["pool_name"]
    with _recording_fleets() as fleets:
        capture_stack(o["cwd"], o["stack"])
    found = fleets.get(name)
    if found is None:
        pools = sorted({*fleets, *listed})
        near = close_matches(name, pools)
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
        raise InputError(
            f"--pool {name!r} is neither a fleet of {file} nor one its program registers{hint}; its pools: "
            f"{', '.join(pools) if pools else 'none'}."
        )
    fleet, args = found
    plan = getattr(fleet, "scaling_plan", None)
    serving = getattr(fleet, "serving", None)
    model = getattr(args, "model", None)
    machine = getattr(fleet, "instance_type", None) or getattr(fleet, "machine_type", None)
    if plan is None or serving is None or model is None or not isinstance(machine, str):
        raise InputError(
            f"--pool {name!r}: the program's fleet is not an elastic pool that serves a model (give it "
            "`model=ServedModel(...)` and `elastic=ElasticArgs(...)`); only those replay."
        )
    if type(fleet).__name__ == "KubernetesServingPool":
        from inference_infra.components.fleet.elastic import with_fast_scale_out

        # the pod autoscaler renders no step policy: the fast scale-out is an Auto Scaling group's
        plan = with_fast_scale_out(plan, 0.0)
    instance = find_instance_type(machine)
    cloud = instance.cloud if instance is not None else Cloud.AWS
    region_key = "aws:region" if cloud is Cloud.AWS else "gcp:region"
    region = o["region"] or _decode(stack.values.get(region_key)) or None
    pool = pool_from_plan(
        name=name,
        plan=plan,
        cold=serving.cold_start,
        model=model,
        machine=machine,
        trace=trace,
        latency=o["latency"] or getattr(args, "latency", None) or "interactive",
        region=region,
        purchase=_purchase(o["purchase"]),
        usd_per_hour=o["usd_per_hour"],
        cold_start=o["cold_start"],
        hosts=int(getattr(getattr(fleet, "plan", None), "hosts_per_replica", 1) or 1),
    )
    note = f"pool {name!r} read from what the program of {project.name} registers for stack {o['stack']!r}"
    plan = _override_plan(pool.plan, o)
    return replace(pool, plan=replace(plan, notes=(*plan.notes, note)))


class _recording_fleets:  # noqa: N801 - used as a context manager, like contextlib's
    """Record the fleet components a program builds (name -> (component, its args)), by wrapping
    pulumi.ComponentResource.__init__ while the program runs; the args are the calling constructor's."""

    def __enter__(self) -> dict[str, tuple[Any, Any]]:
        import pulumi

        self.fleets: dict[str, tuple[Any, Any]] = {}
        self.original = pulumi.ComponentResource.__init__
        original, fleets = self.original, self.fleets

        def record(component: Any, t: str, name: str, *rest: Any, **kw: Any) -> None:
            if t in _PROGRAM_FLEETS:
                fleets[name] = (component, sys._getframe(1).f_locals.get("args"))
            original(component, t, name, *rest, **kw)

        pulumi.ComponentResource.__init__ = record  # type: ignore[method-assign]
        return self.fleets

    def __exit__(self, *exc: object) -> None:
        import pulumi

        pulumi.ComponentResource.__init__ = self.original  # type: ignore[method-assign]


def _override_plan(plan: Any, o: Mapping[str, Any]) -> Any:
    """The scaling flags over a plan (a program's pool is not planned again; a stack file's already
    took them as elastic inputs, so this changes nothing there)."""
    from inference_infra.components.fleet.elastic import with_fast_scale_out, with_scale_in

    changes: dict[str, Any] = {}
    if o["min_size"] is not None:
        changes |= {"min_size": o["min_size"], "desired": o["min_size"]}
    if o["max_size"] is not None:
        changes["max_size"] = o["max_size"]
    if o["target_utilisation"] is not None:
        changes["target_in_flight"] = round(plan.in_flight_per_machine * o["target_utilisation"], 2)
    if o["scale_out_cooldown"] is not None:
        changes["scale_out_cooldown_seconds"] = o["scale_out_cooldown"]
    if o["scale_in_cooldown"] is not None:
        changes["scale_in_cooldown_seconds"] = o["scale_in_cooldown"]
    if o["warm_pool"] is not None:
        changes["warm_pool_size"] = o["warm_pool"]
    if o["scale_in_share"] is not None:
        changes["scale_in_share"] = o["scale_in_share"]
    if o["scale_in_headroom"] is not None:
        changes["scale_in_headroom"] = o["scale_in_headroom"]
    # the fast step's and the deficit scale-in's bands follow the target and the headroom
    # (fleet.elastic.fast_steps, deficit_steps)
    plan = with_scale_in(replace(plan, **changes), o["scale_in_sizing"])
    return with_fast_scale_out(plan, o["fast_scale_out"])


def _stack_budget(root: Path, stack: str) -> float | None:
    """The stack's accelerator budget (USD/h), as the stacks read it: `accelerator-spend-budget`
    maxHourlyUsd in policy/config/<stack>.json beside Pulumi.yaml (infra/aws_stack.py); None without."""
    path = root / "policy" / "config" / f"{stack}.json"
    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, "policy config")
    except OSError:
        return None
    try:
        budget = json.loads(text)["accelerator-spend-budget"]["maxHourlyUsd"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(budget) if isinstance(budget, int | float) and budget > 0 else None


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _dataclass(cls: type, values: Mapping[str, Any], where: str) -> Any:
    """`cls` from a stack mapping of camelCase keys; InputError names an unknown key."""
    from inference_infra.components.errors import InputError, did_you_mean

    known = {f.name for f in fields(cls)}
    kwargs = {}
    for key, value in values.items():
        name = _snake(key)
        if name not in known:
            camel = [re.sub(r"_(\w)", lambda m: m.group(1).upper(), k) for k in sorted(known)]
            raise InputError(
                f"{where}.{key} is not a key simulate knows{did_you_mean(key, camel)}; keys here: "
                f"{', '.join(camel)}."
            )
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise InputError(f"{where}: {e}.") from None


# --- output -----------------------------------------------------------------------------------------


def _write_frontier_plot(path: Path, doc: dict[str, Any]) -> None:
    from inference_infra.components.errors import InputError
    from inference_infra.components.simulate.plot import render_frontier_svg

    try:
        path.write_text(render_frontier_svg(doc), encoding="utf-8")
    except OSError as e:
        raise InputError(f"--plot {str(path)!r} cannot be written ({e.strerror or e}).") from None


def _write_plot(path: Path, result: dict[str, Any], render_svg: Any) -> None:
    from inference_infra.components.errors import InputError

    try:
        if path.suffix.lower() == ".png":
            from inference_infra.components.simulate.plot import render_png

            try:
                render_png(result, path)
            except ImportError:
                raise InputError(
                    f"--plot {str(path)!r}: PNG needs matplotlib, the optional 'plot' extra "
                    "(pip install 'inference-infra[plot]'); or write .svg, which needs nothing."
                ) from None
        else:
            path.write_text(render_svg(result), encoding="utf-8")
    except OSError as e:
        raise InputError(f"--plot {str(path)!r} cannot be written ({e.strerror or e}).") from None


def _table(r: dict[str, Any]) -> str:
    c, t, s, q, sc, slo = r["cost"], r["ttft"], r["scale"], r["queue"], r["scaling"], r["slo"]
    tts = s["time_to_scale_seconds"]
    low, high = sc["cold_start_range_seconds"]
    verdict = (
        f"SLO met: {slo['miss_share']:.2%} of requests missed the {slo['ttft_target_seconds']:g} s TTFT"
        f" target (at most {slo['allowed_miss_share']:.0%})"
        if slo["met"]
        else f"SLO NOT MET: {slo['miss_share']:.2%} of requests missed the {slo['ttft_target_seconds']:g} s"
        f" TTFT target (at most {slo['allowed_miss_share']:.0%} allowed); the cost below does not meet it"
    )
    mark = "" if slo["met"] else " (SLO not met)"
    lines = [
        verdict,
        f"{r['pool']}: {r['model']} on {r['machine']} ({r['latency']}), trace {r['trace']['source']}: "
        f"{r['trace']['requests']:,} requests over {r['trace']['duration_s'] / 60:.1f} min",
        f"  scaling ({sc['cloud']}): {sc['min_size']}..{sc['max_size']} machines of"
        f" {sc['in_flight_per_machine']} slots, starting at {sc['start_size']}, target"
        f" {sc['target_in_flight']:g} in flight per machine; cold start {sc['cold_start_seconds']:.0f} s"
        f" ({low:.0f}..{high:.0f}), warm start {sc['warm_start_seconds']} s"
        f" ({sc['warm_start_range_seconds'][0]:.0f}..{sc['warm_start_range_seconds'][1]:.0f}),"
        f" warm pool {sc['warm_pool_size']}",
        f"  cost ({c['basis']}, {c['window_s'] / 3600:.2f} h):",
        f"    elastic      ${c['elastic_usd']:,.2f}  ({c['elastic_machine_hours']:.2f} machine-hours)"
        f"  {_times(c['elastic_over_oracle'])} the oracle{mark}",
        f"    static       ${c['static_usd']:,.2f}  ({c['static_machines']} machines)"
        f"  {_times(c['static_over_oracle'])} the oracle",
        f"    oracle       ${c['oracle_usd']:,.2f}  ({c['oracle_machine_hours']:.2f} machine-hours, every"
        " request on time with perfect foresight)",
        f"    lower bound  ${c['lower_bound_usd']:,.2f}  ({c['lower_bound_machine_hours']:.2f} machine-hours"
        " of work)",
        f"  TTFT over {t['target_seconds'] * 1000:g} ms: {t['over_target']:,} of {r['trace']['requests']:,} "
        f"({t['over_target_share']:.2%}; {t['unserved']:,} never served, {t['refused']:,} refused as too"
        f" long); {t['over_target_from_waiting']:,} only because they waited "
        f"({t['over_target_from_waiting_share']:.2%}); the oracle {t['oracle_over_target_share']:.2%}",
        f"    p50 {_ms(t['p50_seconds'])}, p99 {_ms(t['p99_seconds'])}, max {_ms(t['max_seconds'])}",
        f"  scale: {s['scale_outs']} scale-outs ({s['launches']} machines: {s['warm_launches']} warm,"
        f" {s['cold_launches']} cold), {s['scale_ins']} scale-ins; {s['min_machines']}..{s['max_machines']}"
        f" machines; time to scale mean {_s(tts['mean'])}, max {_s(tts['max'])};"
        f" {s['capped_periods']} periods wanted more than max; {s['interruptions']} spot interruptions",
        f"  queue: longest {q['max']}, {q['minutes_with_queue']} minutes with a queue",
    ]
    if (k := r.get("kubernetes")) is not None:
        lines.append(
            f"  kubernetes ({k['autoscaler']}, {k['pods_per_node']} pod(s) per node): pod start"
            f" {k['pod_start_seconds']:.0f} s, node start {k['node_start_seconds']:.0f} s, an empty node kept"
            f" {k['scale_down_after_seconds']:.0f} s; {k['pod_starts']} pod starts, {k['node_starts']} node"
            f" starts, {k['nodes_removed']} nodes removed"
        )
    lines += [f"  note: {n}" for n in r["notes"]]
    return "\n".join(lines) + "\n"


def _times(ratio: float | None) -> str:
    return f"{ratio:.2f}x" if ratio is not None else "-"


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds is not None else "-"


def _s(seconds: float | None) -> str:
    return f"{seconds:,.0f} s" if seconds is not None else "-"
