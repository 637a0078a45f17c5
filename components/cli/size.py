"""`inference-infra size`: which machine serves a model and its traffic cheapest per token."""

from __future__ import annotations

import json
import sys

import click

from inference_infra.components.cli import app
from inference_infra.components.cli.choices import PurchaseChoice, price_model_of

_QUANTS = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"]
_FLAGS = {
    "model": "--model",
    "context_tokens": "--context",
    "concurrency": "--concurrency",
    "output_tokens": "--output-tokens",
    "prompt_tokens": "--prompt-tokens",
    "max_memory_utilization": "--max-memory-utilization",
}


@app.command()
@click.option(
    "--model",
    help="Model preset or Hugging Face id, e.g. llama-3.1-70b or meta-llama/Llama-3.1-70B-Instruct.",
)
@click.option(
    "--model-config",
    "model_config",
    type=click.Path(dir_okay=False),
    help="A checkpoint's config.json: sizes any transformer from its shape (instead of --model).",
)
@click.option(
    "--quant",
    type=click.Choice(_QUANTS, case_sensitive=False),
    default="bf16",
    show_default=True,
    help="Weight format.",
)
@click.option(
    "--kv-quant",
    type=click.Choice(_QUANTS, case_sensitive=False),
    help="KV-cache format. Default: the weights' float type (bf16 for fp8/int8/int4 weights).",
)
@click.option("--context", type=int, required=True, help="Longest sequence to hold, prompt + output tokens.")
@click.option("--concurrency", type=int, required=True, help="Sequences in flight at once.")
@click.option(
    "--cloud",
    type=click.Choice(["aws", "gcp", "any"]),
    default="any",
    show_default=True,
    help="Only this cloud's machines.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (its shape: docs/reference.md).")
@click.option(
    "--output-tokens",
    type=int,
    help="Generated tokens per request, for throughput. Default: min(512, context/2).",
)
@click.option(
    "--prompt-tokens",
    type=int,
    help="Prompt tokens per request, for throughput. Default: context - output tokens.",
)
@click.option(
    "--purchase",
    type=PurchaseChoice(),
    default="on-demand",
    show_default=True,
    help="Price model for hourly USD: a capacity mode (preemptible is priced as spot).",
)
@click.option(
    "--region",
    help="Price every machine in this region; one the catalog has no price for there is left out (--all "
    "says so). Default: each machine's reference region.",
)
@click.option(
    "--family",
    type=click.Choice(["nvidia-gpu", "aws-neuron", "google-tpu"]),
    multiple=True,
    help="Only these accelerator families (repeatable).",
)
@click.option(
    "--max-memory-utilization",
    type=float,
    default=0.90,
    show_default=True,
    help="Share of each device's memory the plan may fill.",
)
@click.option("--top", type=int, default=10, show_default=True, help="Rows in the table (0: all).")
@click.option("--explain", is_flag=True, help="Explain every listed option, not only the best.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list the machines a fleet would refuse (multi-host TPU slices, formats the pinned engine "
    "refuses, too small, no price in --region), each with why (JSON: `refused`).",
)
def size(
    model: str | None,
    model_config: str | None,
    quant: str,
    kv_quant: str | None,
    context: int,
    concurrency: int,
    cloud: str,
    as_json: bool,
    output_tokens: int | None,
    prompt_tokens: int | None,
    purchase: str,
    region: str | None,
    family: tuple[str, ...],
    max_memory_utilization: float,
    top: int,
    explain: bool,
    show_all: bool,
) -> None:
    """Size a model for its traffic: memory budget, every machine a fleet can serve it on, ranked by
    USD per million generated tokens."""
    from inference_infra.components.catalog import AcceleratorFamily
    from inference_infra.components.errors import InputError, Problem, raise_if_invalid
    from inference_infra.components.planner import (
        Assumptions,
        NothingFitsError,
        Precision,
        Quantization,
        Traffic,
    )
    from inference_infra.components.planner import size as plan_size

    if top < 0:
        raise_if_invalid("size", [Problem("--top", top, "must be 0 (all) or more")])
    if (model is None) == (model_config is None):
        raise_if_invalid(
            "size",
            [Problem("--model", model, "or --model-config (one of them, not both) names the model to size")],
        )
    if model_config is not None:
        from pathlib import Path

        from inference_infra.components.planner.models import model_from_config

        spec = model_from_config(Path(model_config), "--model-config")
    else:
        from inference_infra.components.planner.models import model_spec, unknown_model_problem

        try:
            spec = model_spec(model)
        except InputError:
            if model.strip().lower().endswith(".json"):
                raise
            hint = "(--model-config PATH sizes any other model from its config.json)"
            raise_if_invalid("size", [unknown_model_problem(model, "--model", hint)])
            raise
    try:
        sizing = plan_size(
            spec,
            Traffic(
                context_tokens=context,
                concurrency=concurrency,
                output_tokens=output_tokens,
                prompt_tokens=prompt_tokens,
            ),
            precision=Precision(
                weights=Quantization(quant.lower()),
                kv_cache=Quantization(kv_quant.lower()) if kv_quant else None,
            ),
            cloud=cloud,
            purchase=price_model_of(purchase),
            region=region,
            families={AcceleratorFamily(f) for f in family} or None,
            assumptions=Assumptions(max_memory_utilization=max_memory_utilization),
        )
    except NothingFitsError:
        raise
    except InputError as e:
        if not e.problems:
            raise
        # Name the command's flags, not the API's parameters.
        raise_if_invalid(
            "size", [Problem(_FLAGS.get(p.input, p.input), p.value, p.allowed) for p in e.problems]
        )
        raise
    if as_json:
        json.dump(sizing.as_json(refused=show_all), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    click.echo(render_table(sizing, top=top, explain=explain, show_all=show_all))


def render_table(sizing, *, top: int = 10, explain: bool = False, show_all: bool = False) -> str:
    """The readable report: the workload and its memory, the ranked options, the best explained;
    with show_all, the machines a fleet would refuse and why."""
    from inference_infra.components.cli.text import wrap
    from inference_infra.components.planner.sizing import sorted_refusals

    lines = [line for note in sizing.notes for line in wrap(f"Note: {note}.", width=110)]
    lines += wrap(sizing.describe_workload(), width=110)
    lines += wrap(f"Assumptions: {sizing.assumptions.describe()}; prices {sizing.purchase.value}.", width=110)
    lines.append("")
    header = (
        f"{'#':>3} {'CLOUD':<5} {'TYPE':<18} {'ACCELERATORS':<26} {'TP':>3} {'REPL':>4} {'MEM':>4}"
        f" {'USD/H':>8} {'TOK/S':>8} {'USD/1M TOK':>10}"
    )
    lines.append(header)
    shown = sizing.options if top == 0 else sizing.options[:top]
    for rank, o in enumerate(shown, start=1):
        hw = o.fit.hardware
        devices = f"{hw.instance.accelerator_count} x {_short(hw.device.name)}"[:26]
        lines.append(
            f"{rank:>3} {o.cloud.value:<5} {o.instance_type:<18} {devices:<26} {o.fit.tensor_parallel:>3}"
            f" {o.fit.replicas:>4} {o.memory_utilization:>4.0%} {o.hourly_usd:>8.2f}"
            f" {o.est_tokens_per_s:>8,.0f} {o.usd_per_million_tokens:>10.3f}"
        )
    more = len(sizing.options) - len(shown)
    if more:
        lines.append(f"    ... {more} more a fleet can serve (--top 0 lists all, --json prints all)")
    held = sum(1 for r in sizing.refused if r.option is not None)
    legend = (
        "TOK/S: generated tokens per second at this concurrency (prefill included); REPL: replicas;"
        f" MEM: busiest device's memory. Only machines a fleet can serve the model on are listed:"
        f" {held} more hold it but a fleet would refuse them (multi-host slice, a format the pinned"
        f" engine refuses, no price in the region), {len(sizing.refused) - held} are too small or cannot"
        " run the format" + ("." if show_all else " (--all lists them with why).")
    )
    lines += wrap(legend, width=110, initial_indent="    ", subsequent_indent="    ")
    lines.append("")
    for rank, o in enumerate(shown if explain else shown[:1], start=1):
        label = "Best" if rank == 1 else f"#{rank}"
        lines.extend(wrap(f"{label}: {o.explanation()}", width=110, subsequent_indent="  "))
    if show_all and sizing.refused:
        lines.append("")
        lines.append("Refused (a fleet would not serve the model on these):")
        for r in sorted_refusals(sizing.refused):
            hw = r.fit.hardware
            devices = f"{hw.instance.accelerator_count} x {_short(hw.device.name)}"[:26]
            cost = (
                f"${r.option.usd_per_million_tokens:,.3f}/1M tok, TP={r.fit.tensor_parallel}"
                if r.option is not None
                else ("does not hold it" if r.fit.format_supported else "cannot run the format")
            )
            text = (
                f"  - {hw.instance.cloud.value} {r.instance_type} ({devices}; {cost}): {'; '.join(r.reasons)}"
            )
            lines.extend(wrap(text, width=110, subsequent_indent="      "))
    return "\n".join(lines)


def _short(device_name: str) -> str:
    name = device_name.split(" (")[0]
    for prefix in ("NVIDIA ", "Google Cloud ", "AWS "):
        name = name.removeprefix(prefix)
    return name
