"""A pool to replay, from the same inputs a fleet takes: its model, machine, peak counts and `elastic`.

The numbers come from the code the fleets use, so the replay and the deployed pool cannot disagree:
the engines and the cold start from `serving.plan_serving`, the scaling numbers from
`fleet.elastic.plan_scaling`, the price from the accelerator catalog, and the time-to-first-token
target from the serving alerts' budgets (`monitoring.serving.BUDGETS`, the p99 time to first token of
the pool's latency class).
"""

from __future__ import annotations

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
from inference_infra.components.fleet.elastic import ElasticArgs, elastic_problems, plan_scaling
from inference_infra.components.monitoring.serving import BUDGETS, Latency
from inference_infra.components.serving.cold_start import WeightSource
from inference_infra.components.serving.model import (
    ServedModel,
    choose_machine,
    plan_serving,
    served_model_problems,
)
from inference_infra.components.simulate.replay import Pool, static_machines
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.trace import Trace

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


def peak_for_trace(
    *, model: ServedModel, machine: str | None, cloud: Cloud | str | None, trace: Trace
) -> int:
    """Machines the trace's busiest minute needs (the static fleet's size): the default peak."""
    problems = served_model_problems(model)
    raise_if_invalid("pool", problems)
    machine, _ = resolve_machine(model, machine, cloud, name=model.name)
    service = ServiceModel(model, machine, mean_context_tokens(trace))
    return max(1, static_machines(trace, service))


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
) -> Pool:
    """The pool `name` as its fleet would plan it; InputError names the bad input (prefixed by `key`)."""
    elastic = elastic or ElasticArgs()
    prefix = f"{key}." if key else ""
    problems: list[Problem] = []
    if latency not in {v.value for v in Latency}:
        problems.append(Problem(f"{prefix}latency", latency, "must be interactive or batch"))
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
    plan = plan_scaling(
        elastic,
        peak=peak,
        serving=serving,
        model=model,
        machine=machine,
        reserved=reserved,
        warm_pool=warm_pool,
    )
    service = ServiceModel(model, machine, mean_context_tokens(trace))
    if usd_per_hour is None:
        price = hourly_price(instance, region=region, model=purchase)
        usd, basis = price.hourly_usd, price.basis
    else:
        usd, basis = usd_per_hour, f"{usd_per_hour:g} USD per machine-hour as given"
    budget = BUDGETS[Latency(latency)]
    return Pool(
        name=name,
        plan=plan,
        service=service,
        usd_per_hour=usd,
        price_basis=basis,
        ttft_target_seconds=budget.ttft_p99_seconds,
        latency=Latency(latency).value,
        cold_start_seconds=serving.cold_start.seconds,
    )
