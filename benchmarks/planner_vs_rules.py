"""The planner's choice against the seed documents' decision tree, on USD per million tokens.

The decision tree (shared/seeds/000, "Which Hardware to Choose?") picks a GPU by
parameter count: 7B-13B -> A100 40GB, 13B-70B -> A100 80GB, > 70B -> H100
("or model sharding"). Someone following it takes the cheapest machine per
hour with that GPU that holds the model (so the rule gets sharding when it
needs it). The planner instead ranks every catalog machine (AWS and GCP GPUs,
TPU slices, Inferentia2/Trainium) by USD per million generated tokens.

Both sides use the same memory check, roofline throughput and on-demand
catalog prices, so the difference is the choice alone. Both pick only among
machines a fleet can serve the model on (planner/servable.py: one host per
engine, the pinned engines' weight and KV formats, tensor parallelism, memory);
the table also shows the pick the planner made before that check
(`unchecked`: the cheapest machine that merely holds the model, e.g. a
multi-host TPU slice no fleet serves) and the saving it claimed. The saving is
printed next to the figures earlier calibrations gave (`EARLIER`). Beside the savings it
prints the step model's error on the published measurements: the vLLM points
the factors are fitted on and the ones held out (planner/vllm_measurements.py),
and the reference points (older vLLM builds and other engines), per point, with
what each measured, then the mean and worst per accelerator family and split,
with the factors and where they come from. Progress goes to stderr. Run by hand:

    .venv/bin/python benchmarks/planner_vs_rules.py
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from inference_infra.components.catalog import AcceleratorFamily, instance_types
from inference_infra.components.planner import (
    Assumptions,
    NothingFitsError,
    Option,
    Precision,
    Quantization,
    Traffic,
    size,
)
from inference_infra.components.planner.calibration import TOLERANCE, errors, points, summary
from inference_infra.components.planner.measurements import Metric
from inference_infra.components.planner.sizing import Sizing

# Average saving (all families, NVIDIA only) this benchmark printed under earlier calibrations.
EARLIER = (
    ("main: roofline calibrated on TensorRT-LLM", 0.495, 0.249),
    ("first pass of the vLLM step model (vLLM 0.6 points, V0 term)", 0.601, 0.361),
)
_UNIT = {Metric.OUTPUT: "out tok/s", Metric.DECODE: "1/ITL", Metric.PREFILL: "P/TTFT"}


@dataclass(frozen=True)
class Scenario:
    model: str
    nominal_b: float  # the size in the model's name, which is what a reader of the rule goes by
    quant: str
    context: int
    concurrency: int

    @property
    def label(self) -> str:
        return f"{self.model} {self.quant} {self.context // 1024}k x{self.concurrency}"


SCENARIOS = (
    Scenario("llama-2-7b", 7, "bf16", 4096, 1),
    Scenario("llama-2-7b", 7, "bf16", 4096, 32),
    Scenario("llama-3.1-8b", 8, "bf16", 8192, 16),
    Scenario("llama-3.1-8b", 8, "fp8", 32768, 8),
    Scenario("llama-3.1-8b", 8, "int4", 4096, 64),
    Scenario("mistral-7b", 7, "bf16", 8192, 32),
    Scenario("qwen2.5-7b", 7, "bf16", 16384, 8),
    Scenario("llama-2-13b", 13, "bf16", 4096, 16),
    Scenario("llama-2-13b", 13, "int8", 2048, 64),
    Scenario("mixtral-8x7b", 47, "bf16", 8192, 16),
    Scenario("mixtral-8x7b", 47, "fp8", 32768, 4),
    Scenario("llama-2-70b", 70, "int8", 4096, 16),
    Scenario("llama-3.1-70b", 70, "bf16", 8192, 32),
    Scenario("llama-3.1-70b", 70, "fp8", 8192, 64),
    Scenario("llama-3.1-70b", 70, "int4", 32768, 8),
    Scenario("qwen2.5-72b", 72, "bf16", 8192, 16),
    Scenario("qwen2.5-72b", 72, "fp8", 32768, 8),
    Scenario("mixtral-8x22b", 141, "fp8", 8192, 16),
    Scenario("llama-3.1-405b", 405, "fp8", 8192, 8),
    Scenario("llama-3.1-405b", 405, "int4", 16384, 16),
)


def rule_accelerator(nominal_b: float) -> str:
    """The seed's decision tree (below 7B it says RTX 4090 or CPU, which no cloud here rents)."""
    if nominal_b <= 13:
        return "a100-40gb"
    if nominal_b <= 70:
        return "a100-80gb"
    return "h100-80gb"


def unchecked(sizing: Sizing) -> list[Option]:
    """What `size` ranked before the servability check: every machine that holds the model."""
    return sizing.options + [r.option for r in sizing.refused if r.option is not None]


def rule_choice(
    s: Scenario, traffic: Traffic, precision: Precision, *, servable: bool = True
) -> Option | None:
    gpus = [i for i in instance_types() if i.accelerator == rule_accelerator(s.nominal_b)]
    try:
        sizing = size(s.model, traffic, precision=precision, candidates=gpus)
    except NothingFitsError:
        return None
    fitting = sizing.options if servable else unchecked(sizing)
    return min(fitting, key=lambda o: (o.hourly_usd, o.instance_type))  # smallest machine that holds it


def cheapest(options: list[Option]) -> Option:
    return min(options, key=lambda o: (o.usd_per_million_tokens, o.hourly_usd, o.cloud, o.instance_type))


def main() -> None:
    started = time.perf_counter()
    rows, savings, gpu_savings, before = [], [], [], []
    for n, s in enumerate(SCENARIOS, 1):
        print(f"[{n}/{len(SCENARIOS)}] sizing {s.label}", file=sys.stderr, flush=True)
        traffic = Traffic(context_tokens=s.context, concurrency=s.concurrency)
        precision = Precision(weights=Quantization(s.quant))
        rule = rule_choice(s, traffic, precision)
        sizing = size(s.model, traffic, precision=precision)
        best, old = sizing.best, cheapest(unchecked(sizing))
        best_gpu = size(s.model, traffic, precision=precision, families={AcceleratorFamily.NVIDIA_GPU}).best
        if rule is None:
            rows.append((s, None, best, old, None, None))
            continue
        old_rule = rule_choice(s, traffic, precision, servable=False)
        assert old_rule is not None
        saving = 1 - best.usd_per_million_tokens / rule.usd_per_million_tokens
        old_saving = 1 - old.usd_per_million_tokens / old_rule.usd_per_million_tokens
        savings.append(saving)
        before.append(old_saving)
        gpu_savings.append(1 - best_gpu.usd_per_million_tokens / rule.usd_per_million_tokens)
        rows.append((s, rule, best, old, saving, old_saving))
    elapsed = time.perf_counter() - started

    header = f"{'SCENARIO':<30} {'RULE PICK':<17} {'$/1M':>8}   {'PLANNER PICK':<17} {'TP':>3} {'$/1M':>8}"
    print(f"{header} {'SAVING':>7}   {'UNCHECKED PICK (before)':<24} {'$/1M':>8} {'SAVING':>7}")
    for s, rule, best, old, saving, old_saving in rows:
        rule_text = (
            f"{rule.instance_type:<17} {rule.usd_per_million_tokens:>8.3f}"
            if rule
            else f"{'(does not fit)':<26}"
        )
        saving_text = f"{saving:>7.0%}" if saving is not None else f"{'-':>7}"
        old_text = f"{old_saving:>7.0%}" if old_saving is not None else f"{'-':>7}"
        same = "(same)" if old.instance_type == best.instance_type else old.instance_type
        print(
            f"{s.label:<30} {rule_text}   {best.instance_type:<17} {best.fit.tensor_parallel:>3}"
            f" {best.usd_per_million_tokens:>8.3f} {saving_text}   {same:<24}"
            f" {old.usd_per_million_tokens:>8.3f} {old_text}"
        )
    print()
    changed = sum(1 for _, _, best, old, _, _ in rows if old.instance_type != best.instance_type)
    print(
        f"Average saving, planner's pick vs the decision tree: {sum(savings) / len(savings):.1%}"
        f" over {len(savings)} scenarios where the tree's GPU holds the model (picks a fleet can serve)."
    )
    print(
        f"  before the servability check: {sum(before) / len(before):.1%}; {changed} of {len(rows)}"
        " planner picks were machines no fleet would serve the model on."
    )
    print(f"Average saving, planner restricted to NVIDIA GPUs:  {sum(gpu_savings) / len(gpu_savings):.1%}.")
    for label, every, nvidia in EARLIER:
        print(f"  before, {label}: {every:.1%} ({nvidia:.1%} NVIDIA only)")
    print(
        f"USD per million generated tokens, on-demand list prices; {len(SCENARIOS)} scenarios sized"
        f" (3 x {len(instance_types())} machines each) in {elapsed:.2f} s."
    )


def error_table() -> None:
    print("building the measurement table (fitting each point's layout)...", file=sys.stderr, flush=True)
    table = points()
    print(f"estimating {len(table)} published points...", file=sys.stderr, flush=True)
    found = errors(table=table)
    print()
    head = f"{'SPLIT':<9} {'MEASUREMENT (weights/KV, ISL/OSL, batch, engine)':<96} {'METRIC':<9}"
    print(f"{head} {'MEASURED':>9} {'PLANNER':>9} {'ERROR':>7}")
    for p, e in found:
        m = p.measurement
        label = (
            f"{m.model} {m.weights}/{m.kv_cache} on {m.devices} x {m.instance_type},"
            f" {m.prompt_tokens}/{m.output_tokens} x{p.traffic.concurrency} ({m.engine} {m.engine_version})"
        )
        print(
            f"{m.split.value:<9} {label[:96]:<96} {_UNIT[m.metric]:<9} {m.tokens_per_s:>9,.0f}"
            f" {m.tokens_per_s * (1 + e):>9,.0f} {e:>+7.1%}"
        )
    print()
    print(f"{'FAMILY':<12} {'SPLIT':<9} {'POINTS':>6} {'MEAN':>7} {'WORST':>7}")
    for (family, split), (n, mean, worst) in summary(found).items():
        print(f"{family.value:<12} {split.value:<9} {n:>6} {mean:>7.1%} {worst:>7.1%}")
    print(
        f"(tolerance {TOLERANCE:.0%} on vLLM fit and holdout points;"
        " reference points: older vLLM builds and other engines)"
    )
    print()
    for family in AcceleratorFamily:
        eff = Assumptions().efficiency(family)
        print(f"{family.value}: {eff.describe()}; {eff.basis}")


if __name__ == "__main__":
    main()
    error_table()
