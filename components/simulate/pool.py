"""A pool to replay, from the same inputs a fleet takes: its model, machine, peak counts and `elastic`.

The numbers come from the code the fleets use, so the replay and the deployed pool cannot disagree:
the engines and the cold start from `serving.plan_serving`, the scaling numbers from
`fleet.elastic.plan_scaling`, the price from the accelerator catalog, and the time-to-first-token
target from the serving alerts' budgets (`monitoring.serving.BUDGETS`, the p99 time to first token of
the pool's latency class).
"""

from __future__ import annotations

import math
from dataclasses import replace

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    PriceModel,
    accelerator,
    find_instance_type,
    hourly_price,
)
from inference_infra.components.errors import InputError, Problem, raise_if_invalid
from inference_infra.components.fleet.elastic import (
    WARM_BOOT_SECONDS,
    WARM_CACHE_READ_GIB_S,
    ElasticArgs,
    ScalingPlan,
    elastic_problems,
    plan_scaling,
)
from inference_infra.components.monitoring.serving import BUDGETS, Latency
from inference_infra.components.serving.cold_start import ColdStart, WeightSource
from inference_infra.components.serving.model import (
    ServedModel,
    choose_machine,
    plan_serving,
    served_model_problems,
)
from inference_infra.components.simulate.references import slo_oracle
from inference_infra.components.simulate.replay import Pool
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.trace import Trace
from inference_infra.components.simulate.workload import workload
from inference_infra.components.validation import check_types

OBJECT_STORE = {Cloud.AWS: WeightSource.S3, Cloud.GCP: WeightSource.GCS}


def mean_context_tokens(trace: Trace) -> float:
    """Cached tokens a decoding sequence holds on average: prompt + half its output."""
    reqs = trace.requests
    return sum(r.prompt_tokens + r.output_tokens / 2 for r in reqs) / len(reqs)


def resolve_machine(
    model: ServedModel, machine: str | None, cloud: Cloud | str | None, *, name: str, prefix: str = ""
) -> tuple[str, InstanceType]:
    """The pool's machine: as given (checked against the catalog) or the planner's cheapest NVIDIA pick."""
    given_cloud = Cloud(cloud) if cloud is not None else None
    if machine is None:
        resolution = choose_machine(
            model,
            None,
            cloud=given_cloud or Cloud.AWS,
            family=AcceleratorFamily.NVIDIA_GPU,
            machine_key=f"{prefix}machine",
            model_key=f"{prefix}model",
        )
        raise_if_invalid(f"pool {name!r}", resolution.problems)
        assert resolution.instance_type is not None
        machine = resolution.instance_type
    instance = find_instance_type(machine, given_cloud)
    if instance is None:
        where = f" for {given_cloud.value}" if given_cloud else ""
        raise InputError(
            f"pool {name!r}: {prefix}machine {machine!r} is not in the accelerator catalog{where}; "
            "`inference-infra size` lists the machines.",
            [Problem(f"{prefix}machine", machine, "must be an instance type of the catalog")],
        )
    return machine, instance


COLD_STARTS = ("fastest", "typical", "slowest")


def pick_cold_start(estimate: ColdStart, which: str) -> float:
    """The replayed cold start: the estimate's typical sum or an end of its range."""
    fastest, slowest = estimate.range_seconds()
    return {"fastest": fastest, "typical": estimate.seconds, "slowest": slowest}[which]


def warm_range(estimate: ColdStart) -> tuple[float, float]:
    """The warm start's range, with the fleet plan's restart and disk figures."""
    return estimate.warm_range_seconds(boot_seconds=WARM_BOOT_SECONDS, read_gib_s=WARM_CACHE_READ_GIB_S)


def _with_warm(plan: ScalingPlan, estimate: ColdStart, which: str) -> ScalingPlan:
    """The plan's warm start at the chosen end of its range (typical: the plan's own figure)."""
    if which == "typical":
        return plan
    fastest, slowest = warm_range(estimate)
    return replace(plan, warm_start_seconds=math.ceil(fastest if which == "fastest" else slowest))


def peak_for_trace(
    *,
    model: ServedModel,
    machine: str | None,
    cloud: Cloud | str | None,
    trace: Trace,
    latency: Latency | str = Latency.INTERACTIVE,
) -> int:
    """Machines the trace's busiest minute needs with perfect foresight (the SLO-aware oracle's
    busiest minute). Only when asked (`--peak trace`): a peak read from the trace it is replayed on
    looks ahead, so the replay says so in its notes."""
    # the fleet's own checks: the fields' types and bounds first (check_types), then the model's
    raise_if_invalid("pool", check_types(model, "model."))
    raise_if_invalid("pool", served_model_problems(model))
    machine, _ = resolve_machine(model, machine, cloud, name=model.name)
    service = ServiceModel(model, machine, mean_context_tokens(trace))
    slots = service.slots
    target = BUDGETS[Latency(latency)].ttft_p99_seconds
    return max(1, max(slo_oracle(workload(trace, service, slots), target).machines, default=1))


def build_pool(
    *,
    name: str,
    model: ServedModel,
    machine: str | None,
    peak: int,
    trace: Trace,
    elastic: ElasticArgs | None = None,
    cloud: Cloud | str | None = None,
    latency: Latency | str = Latency.INTERACTIVE,
    reserved: int = 0,
    warm_pool: bool = True,
    region: str | None = None,
    purchase: PriceModel = PriceModel.ON_DEMAND,
    usd_per_hour: float | None = None,
    source: WeightSource | None = None,
    key: str = "",
    budget_hourly_usd: float | None = None,
    cold_start: str = "typical",
) -> Pool:
    """The pool `name` as its fleet would plan it; InputError names the bad input (prefixed by `key`)."""
    elastic = elastic or ElasticArgs()
    prefix = f"{key}." if key else ""
    problems: list[Problem] = []
    if latency not in {v.value for v in Latency}:
        problems.append(Problem(f"{prefix}latency", latency, "must be interactive or batch"))
    # As the fleet skeleton's step 0: the fields' types and bounds (check_types) before anything is
    # computed from them, in the same words a fleet gives.
    problems += check_types(model, f"{prefix}model.") + check_types(elastic, f"{prefix}elastic.")
    if not problems:
        problems += elastic_problems(elastic, peak=peak, key=f"{prefix}elastic")
    raise_if_invalid(f"pool {name!r}", problems)
    machine, instance = resolve_machine(model, machine, cloud, name=name, prefix=prefix)
    the_cloud = instance.cloud
    serving, problems = plan_serving(
        model,
        machine=machine,
        cloud=the_cloud,
        source=source or OBJECT_STORE[the_cloud],
        key=f"{prefix}model",
        families={accelerator(instance.accelerator).family},
    )
    raise_if_invalid(f"pool {name!r}", problems)
    assert serving is not None
    if usd_per_hour is None:
        price = hourly_price(instance, region=region, model=purchase)
        usd, basis = price.hourly_usd, price.basis
    else:
        usd, basis = usd_per_hour, f"{usd_per_hour:g} USD per machine-hour as given"
    # the stack's budget caps the default maximum as the fleet does (at the on-demand price)
    max_by_budget = None
    if budget_hourly_usd is not None:
        on_demand = hourly_price(instance, region=region).hourly_usd
        max_by_budget = int(budget_hourly_usd // on_demand) if on_demand > 0 else None
    plan = plan_scaling(
        elastic,
        peak=peak,
        serving=serving,
        model=model,
        machine=machine,
        reserved=reserved,
        max_by_budget=max_by_budget,
        warm_pool=warm_pool,
    )
    service = ServiceModel(model, machine, mean_context_tokens(trace))
    budget = BUDGETS[Latency(latency)]
    return Pool(
        name=name,
        plan=_with_warm(plan, serving.cold_start, cold_start),
        service=service,
        usd_per_hour=usd,
        price_basis=basis,
        ttft_target_seconds=budget.ttft_p99_seconds,
        latency=Latency(latency).value,
        cold_start_seconds=pick_cold_start(serving.cold_start, cold_start),
        cold_start_range=serving.cold_start.range_seconds(),
        warm_start_range=warm_range(serving.cold_start),
        region=region,
    )


def pool_from_plan(
    *,
    name: str,
    plan: ScalingPlan,
    cold: ColdStart,
    model: ServedModel,
    machine: str,
    trace: Trace,
    latency: Latency | str = Latency.INTERACTIVE,
    region: str | None = None,
    purchase: PriceModel = PriceModel.ON_DEMAND,
    usd_per_hour: float | None = None,
    cold_start: str = "typical",
    hosts: int = 1,
) -> Pool:
    """A pool from the plan a fleet already made (a program's pool, `simulate --cwd PROGRAM`): its
    ScalingPlan and cold-start estimate are replayed as they are, not planned again. `hosts` > 1: a
    replica over that many machines (a LeaderWorkerSet group), replayed as one unit of N machines' price
    whose slots and decode speed are the group's (ServiceModel)."""
    instance = find_instance_type(machine)
    if instance is None:
        raise InputError(
            f"pool {name!r}: machine {machine!r} is not in the accelerator catalog.",
            [Problem("machine", machine, "must be an instance type of the catalog")],
        )
    if usd_per_hour is None:
        price = hourly_price(instance, region=region, model=purchase)
        usd, basis = price.hourly_usd, price.basis
    else:
        usd, basis = usd_per_hour, f"{usd_per_hour:g} USD per machine-hour as given"
    if hosts > 1:
        usd, basis = usd * hosts, f"{hosts} machines a replica (a LeaderWorkerSet group) x {basis}"
    return Pool(
        name=name,
        plan=_with_warm(plan, cold, cold_start),
        service=ServiceModel(model, machine, mean_context_tokens(trace), hosts),
        usd_per_hour=usd,
        price_basis=basis,
        ttft_target_seconds=BUDGETS[Latency(latency)].ttft_p99_seconds,
        latency=Latency(latency).value,
        cold_start_seconds=pick_cold_start(cold, cold_start),
        cold_start_range=cold.range_seconds(),
        warm_start_range=warm_range(cold),
        region=region,
    )
