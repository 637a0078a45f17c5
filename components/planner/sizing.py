"""`size`: memory budget, fit on every catalog machine, throughput, cost, ranking."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    Price,
    PriceModel,
    accelerator,
    hourly_price,
    instance_types,
)
from inference_infra.components.catalog.zones import AWS_ZONES, GCP_ZONES
from inference_infra.components.errors import InputError, Problem, raise_if_invalid
from inference_infra.components.planner.allowed import allowed as is_allowed
from inference_infra.components.planner.allowed import describe_patterns
from inference_infra.components.planner.assumptions import Assumptions, validate_assumptions
from inference_infra.components.planner.cost import Option, blended_price, rank
from inference_infra.components.planner.fit import Fit, fit
from inference_infra.components.planner.memory import MemoryBudget, Traffic, memory_budget, validate_traffic
from inference_infra.components.planner.models import ModelSpec, model_spec, validate_model_spec
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.servable import servable_problems
from inference_infra.components.planner.throughput import estimate, pipelined

ANY_CLOUD = "any"


class NothingFitsError(InputError):
    """No machine among the candidates holds the model and its traffic."""


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """A candidate machine a fleet would refuse for this model, with every reason (servable.py).

    `option` carries its figures when the model fits its memory (e.g. a multi-host TPU slice)."""

    fit: Fit
    reasons: tuple[str, ...]
    option: Option | None = None

    @property
    def instance_type(self) -> str:
        return self.fit.hardware.instance.name

    def as_json(self) -> dict[str, Any]:
        """An entry of `size --all --json`'s `refused` (docs/reference.md)."""
        if self.option is not None:
            shown = self.option.as_json()
        else:
            hw = self.fit.hardware
            shown = {
                "cloud": hw.instance.cloud.value,
                "instance_type": hw.instance.name,
                "accelerator": hw.device.key,
                "accelerators": hw.instance.accelerator_count,
                "tensor_parallel": self.fit.tensor_parallel,
                "hourly_usd": None,
                "est_tokens_per_s": None,
                "usd_per_million_tokens": None,
                "memory_utilization": round(self.fit.memory_utilization, 3),
            }
        return {**shown, "refused_because": list(self.reasons)}


@dataclass(frozen=True, kw_only=True)
class Sizing:
    """The planner's answer: the budget, the ranked options and the machines that were too small."""

    model: ModelSpec
    traffic: Traffic
    precision: Precision
    assumptions: Assumptions
    purchase: PriceModel
    memory: MemoryBudget
    options: list[Option]  # servable, cheapest per million tokens first
    rejected: list[Fit] = field(default_factory=list)  # too small, or a format the engine refuses
    refused: list[Refusal] = field(default_factory=list)  # every machine a fleet would refuse, with why
    notes: tuple[str, ...] = ()  # said before the pick (a region the catalog lacks, ...)

    @property
    def best(self) -> Option:
        return self.options[0]

    def as_json(self, *, refused: bool = False) -> dict[str, Any]:
        """`inference-infra size --json` (docs/reference.md); `refused` adds the machines a fleet
        would refuse."""
        m = self.memory
        shown: dict[str, Any] = {
            "model": self.model.name,
            "memory": {
                "weights_gib": round(m.weights_gib, 3),
                "kv_cache_gib": round(m.kv_cache_gib, 3),
                "activation_gib": round(m.activation_gib, 3),
                "total_gib": round(m.total_gib, 3),
            },
            "options": [o.as_json() for o in self.options],
        }
        if self.notes:
            shown["notes"] = list(self.notes)
        if refused:
            shown["refused"] = [r.as_json() for r in sorted_refusals(self.refused)]
        return shown

    def describe_workload(self) -> str:
        t, m = self.traffic, self.memory
        return (
            f"{self.model.describe()}. {self.precision.describe()}; {t.concurrency} concurrent sequences"
            f" of up to {t.context_tokens:,} tokens ({t.prompt:,} prompt + {t.output:,} generated assumed for"
            f" throughput). Memory: {m.weights_gib:.1f} GiB weights + {m.kv_cache_gib:.1f} GiB KV cache"
            f" ({m.kv_cache_per_sequence_gib:.3g} GiB per sequence) + {m.activation_gib:.1f} GiB activations"
            f" = {m.total_gib:.1f} GiB, plus {self.assumptions.runtime_reserve_gib:g} GiB runtime per device."
        )


def sorted_refusals(refused: Iterable[Refusal]) -> list[Refusal]:
    """Those with figures first (cheapest per million tokens first), then the rest by name."""
    return sorted(
        refused,
        key=lambda r: (
            r.option is None,
            r.option.usd_per_million_tokens if r.option is not None else 0.0,
            r.fit.hardware.instance.cloud,
            r.instance_type,
        ),
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
    allowed: Sequence[str] | None = None,
    allowed_where: str = "this environment",
    spot_share: float | None = None,
    hosts_per_replica: int = 1,
) -> Sizing:
    """Size a model for its traffic on every candidate machine and rank what a fleet can serve.

    `region` prices every machine there (one the catalog has no price for there is refused);
    `allowed` (allowed-accelerator-types patterns, allowed.py) refuses the machines it does not
    admit, naming `allowed_where` (e.g. "environment 'dev' (allowedTypes['*'])"). `spot_share`
    strictly between 0 and 1 (a fleet mixing spot with on-demand or reserved machines) prices every
    machine at the fleet's blended rate (cost.blended_price) instead of at `purchase`.
    `hosts_per_replica` > 1 (Kubernetes GPU pools: a LeaderWorkerSet group) sizes one replica over that
    many identical machines (fit.multi_host_fit), priced as that many machines, its throughput with the
    pipeline penalty (throughput.pipelined); a machine that holds the model on fewer hosts is refused.

    Raises InputError for bad input and NothingFitsError when no candidate
    holds the model (its message gives the memory figures of the closest).
    """
    precision = precision or Precision()
    assumptions = assumptions or Assumptions()
    raise_if_invalid("size", validate_request(model, traffic, precision, assumptions, cloud))
    spec = model_spec(model)
    machines = list(candidates) if candidates is not None else candidate_instances(cloud, families, max_hosts)
    hosts = hosts_per_replica
    fitted = [fit(spec, traffic, precision, assumptions, m, hosts) for m in machines]
    fewer = {
        m.name: fit(spec, traffic, precision, assumptions, m, hosts - 1) if hosts > 1 else None
        for m in machines
    }
    notes, unpriced = _region_notes(machines, region)
    if machines and len(unpriced) == len(machines):
        # The catalog prices none of them there: a region of the clouds is priced at each machine's
        # reference region (the basis says so, as the plan's cost table does); anything else is a typo.
        known = sorted({r for m in machines for r in m.hourly_usd})
        if region not in AWS_ZONES and region not in GCP_ZONES:
            raise InputError(
                f"size: unknown region {region!r}.",
                [Problem("region", region, f"is not a known region; the catalog prices {', '.join(known)}")],
            )
        notes = [
            f"the catalog prices none of the {len(machines)} candidate machines in {region} (it prices"
            f" {', '.join(known)}): each is priced in its reference region, as its basis says"
        ]
        unpriced = {}
    mixed = spot_share is not None and 0 < spot_share < 1
    options: list[Option] = []
    refused: list[Refusal] = []
    for f in fitted:
        reasons = servable_problems(spec, precision, f, fewer[f.hardware.instance.name])
        if f.hardware.instance.name in unpriced:
            reasons.append(unpriced[f.hardware.instance.name])
        if allowed is not None and not is_allowed(f.hardware.instance.name, allowed):
            reasons.append(
                f"allowed-accelerator-types does not allow {f.hardware.instance.name} in {allowed_where}"
                f" (allowed: {describe_patterns(allowed)})"
            )
        option = (
            Option(
                fit=f,
                throughput=pipelined(estimate(spec, traffic, precision, assumptions, f), hosts),
                price=replica_price(
                    blended_price(f.hardware.instance, region, spot_share)
                    if mixed
                    else hourly_price(f.hardware.instance, region=region, model=purchase),
                    hosts,
                ),
                purchase=purchase,
                spot_share=spot_share if mixed else None,
            )
            if f.fits
            else None
        )
        if not reasons and option is not None:
            options.append(option)
        else:
            refused.append(Refusal(fit=f, reasons=tuple(reasons), option=option))
    sizing = Sizing(
        model=spec,
        traffic=traffic,
        precision=precision,
        assumptions=assumptions,
        purchase=purchase,
        memory=memory_budget(spec, traffic, precision, assumptions),
        options=rank(options),
        rejected=[f for f in fitted if not f.fits],
        refused=refused,
        notes=tuple(notes),
    )
    if not sizing.options:
        raise _nothing_fits(sizing, cloud)
    return sizing


def replica_price(machine: Price, hosts: int) -> Price:
    """A replica's hourly price: `hosts` machines at the machine's price (one host: the machine's)."""
    if hosts <= 1:
        return machine
    return Price(round(machine.hourly_usd * hosts, 6), f"{hosts} machines x {machine.basis}")


def _region_notes(machines: list[InstanceType], region: str | None) -> tuple[list[str], dict[str, str]]:
    """(notes said before the pick, machine -> why it is left out) for a region the catalog lacks prices of.

    A machine with no price in `region` is left out rather than priced elsewhere, so the pick and
    the plan's cost table price the same region."""
    if region is None:
        return [], {}
    lacking = [m for m in machines if region not in m.hourly_usd]
    if not lacking:
        return [], {}
    why = {
        m.name: f"the catalog has no {region} price for {m.name} (priced in {', '.join(m.hourly_usd)})"
        for m in lacking
    }
    shown = ", ".join(m.name for m in lacking[:6]) + (
        f" and {len(lacking) - 6} more" if len(lacking) > 6 else ""
    )
    note = (
        f"the catalog has no {region} price for {len(lacking)} of {len(machines)} candidate machines"
        f" ({shown}); they are left out rather than priced in another region"
    )
    return [note], why


def _nothing_fits(sizing: Sizing, cloud: Cloud | str | None) -> NothingFitsError:
    where = f"{c.value} " if (c := _cloud(cloud)) is not None else ""
    held = [r for r in sizing.refused if r.option is not None]
    if held:
        # Machines hold it, but a fleet would refuse every one of them: say why, cheapest first.
        first = sorted_refusals(held)[0]
        return NothingFitsError(
            f"no {where}machine a fleet can serve {sizing.model.name} on. {sizing.describe_workload()}"
            f" {len(held)} machines hold it but a fleet would refuse them, e.g. {first.instance_type}:"
            f" {'; '.join(first.reasons)}. `inference-infra size --all` lists every machine with why.",
            [
                Problem(
                    "model", sizing.model.name, "fits no machine a fleet can serve it on with this traffic"
                )
            ],
        )
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
