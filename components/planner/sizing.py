"""`size`: memory budget, fit on every catalog machine, throughput, cost, ranking."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    PriceModel,
    accelerator,
    hourly_price,
    instance_types,
)
from inference_infra.components.errors import InputError, Problem, raise_if_invalid
from inference_infra.components.planner.assumptions import Assumptions, validate_assumptions
from inference_infra.components.planner.cost import Option, rank
from inference_infra.components.planner.fit import Fit, fit
from inference_infra.components.planner.memory import MemoryBudget, Traffic, memory_budget, validate_traffic
from inference_infra.components.planner.models import ModelSpec, model_spec, validate_model_spec
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.throughput import estimate

ANY_CLOUD = "any"


class NothingFitsError(InputError):
    """No machine among the candidates holds the model and its traffic."""


@dataclass(frozen=True, kw_only=True)
class Sizing:
    """The planner's answer: the budget, the ranked options and the machines that were too small."""

    model: ModelSpec
    traffic: Traffic
    precision: Precision
    assumptions: Assumptions
    purchase: PriceModel
    memory: MemoryBudget
    options: list[Option]  # cheapest per million tokens first
    rejected: list[Fit] = field(default_factory=list)

    @property
    def best(self) -> Option:
        return self.options[0]

    def as_json(self) -> dict[str, Any]:
        """`inference-infra size --json` (docs/reference.md)."""
        m = self.memory
        return {
            "model": self.model.name,
            "memory": {
                "weights_gib": round(m.weights_gib, 3),
                "kv_cache_gib": round(m.kv_cache_gib, 3),
                "activation_gib": round(m.activation_gib, 3),
                "total_gib": round(m.total_gib, 3),
            },
            "options": [o.as_json() for o in self.options],
        }

    def describe_workload(self) -> str:
        t, m = self.traffic, self.memory
        return (
            f"{self.model.describe()}. {self.precision.describe()}; {t.concurrency} concurrent sequences"
            f" of up to {t.context_tokens:,} tokens ({t.prompt:,} prompt + {t.output:,} generated assumed for"
            f" throughput). Memory: {m.weights_gib:.1f} GiB weights + {m.kv_cache_gib:.1f} GiB KV cache"
            f" ({m.kv_cache_per_sequence_gib:.3g} GiB per sequence) + {m.activation_gib:.1f} GiB activations"
            f" = {m.total_gib:.1f} GiB, plus {self.assumptions.runtime_reserve_gib:g} GiB runtime per device."
        )


def validate_request(
    model: str | ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    cloud: Cloud | str | None = None,
) -> list[Problem]:
    """Every problem with a sizing request (unknown model, bad traffic, ...)."""
    problems: list[Problem] = []
    spec: ModelSpec | None = None
    if isinstance(model, ModelSpec):
        problems += validate_model_spec(model)
        spec = model if not problems else None
    else:
        try:
            spec = model_spec(model)
        except InputError as e:
            problems += e.problems
    problems += validate_traffic(traffic, spec)
    for name, q in (("quantization", precision.weights), ("kv_cache_quantization", precision.kv_cache)):
        if q is not None and not isinstance(q, Quantization):
            problems.append(Problem(name, q, f"must be one of {', '.join(x.value for x in Quantization)}"))
    problems += validate_assumptions(assumptions)
    if cloud is not None and cloud != ANY_CLOUD and cloud not in {c.value for c in Cloud}:
        problems.append(Problem("cloud", cloud, "must be aws, gcp or any"))
    return problems


def _cloud(cloud: Cloud | str | None) -> Cloud | None:
    return None if cloud is None or cloud == ANY_CLOUD else Cloud(cloud)


def candidate_instances(
    cloud: Cloud | str | None = None,
    families: Collection[AcceleratorFamily] | None = None,
    max_hosts: int | None = None,
) -> list[InstanceType]:
    """Machines one can rent by the hour: Capacity-Block-only types are left out (bought per block).
    max_hosts leaves out TPU slices of more hosts (a served model needs a single-host slice)."""
    return [
        i
        for i in instance_types(_cloud(cloud))
        if (families is None or accelerator(i.accelerator).family in families)
        and not i.capacity_blocks_only
        and (max_hosts is None or i.hosts <= max_hosts)
    ]


def size(
    model: str | ModelSpec,
    traffic: Traffic,
    *,
    precision: Precision | None = None,
    cloud: Cloud | str | None = None,
    purchase: PriceModel = PriceModel.ON_DEMAND,
    region: str | None = None,
    families: Collection[AcceleratorFamily] | None = None,
    candidates: Iterable[InstanceType] | None = None,
    assumptions: Assumptions | None = None,
    max_hosts: int | None = None,
) -> Sizing:
    """Size a model for its traffic on every candidate machine and rank what fits.

    Raises InputError for bad input and NothingFitsError when no candidate
    holds the model (its message gives the memory figures of the closest).
    """
    precision = precision or Precision()
    assumptions = assumptions or Assumptions()
    raise_if_invalid("size", validate_request(model, traffic, precision, assumptions, cloud))
    spec = model_spec(model)
    machines = list(candidates) if candidates is not None else candidate_instances(cloud, families, max_hosts)
    fitted = [fit(spec, traffic, precision, assumptions, m) for m in machines]
    options = [
        Option(
            fit=f,
            throughput=estimate(spec, traffic, precision, assumptions, f),
            price=hourly_price(f.hardware.instance, region=region, model=purchase),
            purchase=purchase,
        )
        for f in fitted
        if f.fits
    ]
    sizing = Sizing(
        model=spec,
        traffic=traffic,
        precision=precision,
        assumptions=assumptions,
        purchase=purchase,
        memory=memory_budget(spec, traffic, precision, assumptions),
        options=rank(options),
        rejected=[f for f in fitted if not f.fits],
    )
    if not sizing.options:
        raise _nothing_fits(sizing, cloud)
    return sizing


def _nothing_fits(sizing: Sizing, cloud: Cloud | str | None) -> NothingFitsError:
    where = f"{c.value} " if (c := _cloud(cloud)) is not None else ""
    if not sizing.rejected:
        return NothingFitsError(f"no {where}machines to size {sizing.model.name} on.")
    # The machine with the most memory the format can run on says best how far off the plan is.
    roomiest = max(sizing.rejected, key=lambda f: (f.format_supported, f.ceiling_gib * f.hardware.units))
    tips = []
    if sizing.precision.weights.bytes_per_element > 0.5:
        tips.append("quantize the weights (--quant fp8 or int4)")
    if sizing.precision.kv.bytes_per_element > 1:
        tips.append("quantize the KV cache (--kv-quant fp8)")
    tips.append("shorten the context or lower the concurrency (split the traffic over several machines)")
    return NothingFitsError(
        f"nothing in the {where}catalog fits. {sizing.describe_workload()} Closest: {roomiest.problem}."
        f" Options: {'; '.join(tips)}.",
        [Problem("model", sizing.model.name, "fits no single machine in the catalog with this traffic")],
    )
