"""What the fleets and the stack config call: pick an instance type, or check one.

- `choose_instance_type`: a config that names a model and its traffic instead
  of an instance type gets the planner's cheapest option per million tokens
  among the machines the fleet can run (its cloud and accelerator family).
- `check_fit`: a config that names an instance type and a model gets
  problems (with the memory figures) when the model does not fit it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from inference_infra.components.catalog import (
    AcceleratorFamily,
    CatalogError,
    Cloud,
    PriceModel,
    instance_type,
)
from inference_infra.components.catalog.zones import AWS_ZONES, GCP_ZONES
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.planner.allowed import allowed_patterns, describe_patterns
from inference_infra.components.planner.assumptions import Assumptions
from inference_infra.components.planner.cost import Option
from inference_infra.components.planner.fit import fit
from inference_infra.components.planner.memory import Traffic
from inference_infra.components.planner.models import ModelSpec, model_spec
from inference_infra.components.planner.precision import Precision
from inference_infra.components.planner.servable import MAX_REPLICA_HOSTS, servable_problems
from inference_infra.components.planner.sizing import (
    NothingFitsError,
    Sizing,
    size,
    validate_request,
)
from inference_infra.components.planner.throughput import PIPELINE_EFFICIENCY_BASIS


@dataclass(frozen=True)
class Choice:
    """The planner's pick for a fleet, with the sizing behind it."""

    option: Option
    sizing: Sizing
    notes: tuple[str, ...] = ()  # what the pick could not honour (an allowed-types list, a region)

    @property
    def instance_type(self) -> str:
        return self.option.instance_type

    @property
    def cloud(self) -> Cloud:
        return self.option.cloud

    @property
    def tensor_parallel(self) -> int:
        return self.option.fit.tensor_parallel

    @property
    def hosts_per_replica(self) -> int:
        return self.option.fit.hosts

    def summary(self) -> str:
        """One line for `plan` output: which machine, why, and what it costs."""
        o, t = self.option, self.sizing.traffic
        hosts = o.fit.hosts
        machine = f"{hosts} x {o.instance_type} per replica" if hosts > 1 else o.instance_type
        layout = f"TP={o.fit.tensor_parallel}" + (f" x PP={hosts}" if hosts > 1 else "")
        return (
            f"{self.sizing.model.name} ({self.sizing.precision.describe()}, {t.concurrency} x"
            f" {t.context_tokens:,} tokens) -> {machine}: {layout},"
            f" {o.memory_utilization:.0%} of {o.fit.hardware.unit_name} memory, ~{o.est_tokens_per_s:,.0f}"
            f" tokens/s, ${o.hourly_usd:,.2f}/h {_market(o)}{' per replica' if hosts > 1 else ''},"
            f" ${o.usd_per_million_tokens:,.3f}"
            f" per million tokens ({o.price.basis}; cheapest of {len(self.sizing.options)} a fleet can serve)"
            f"{efficiency_caveat(self.sizing.assumptions, o.fit.hardware.device.family)}"
            + (f"; {PIPELINE_EFFICIENCY_BASIS}" if hosts > 1 else "")
            + "".join(f"; {n}" for n in (*self.sizing.notes, *self.notes))
        )


def _market(option: Option) -> str:
    """The market the pick was ranked at, saying so when spot fell back to the on-demand rate."""
    if option.spot_share is not None:
        share = option.spot_share
        return f"blended ({share:.0%} spot, {1 - share:.0%} at the on-demand rate, by the fleet's counts)"
    if option.purchase is PriceModel.SPOT and "priced at on-demand" in option.price.basis:
        return "spot, at the on-demand rate (no spot figure)"
    return option.purchase.value


def efficiency_caveat(assumptions: Assumptions, family: AcceleratorFamily) -> str:
    """'; <family> throughput factors: ...' when some factor is borrowed from another family."""
    eff = assumptions.efficiency(family)
    return f"; {family.value} throughput factors: {eff.basis}" if eff.borrows else ""


def _regions() -> frozenset[str]:
    return frozenset({*AWS_ZONES, *GCP_ZONES})


def choose_instance_type(
    model: str | ModelSpec,
    traffic: Traffic,
    cloud: Cloud | str,
    purchase: PriceModel = PriceModel.ON_DEMAND,
    *,
    families: Collection[AcceleratorFamily] | None = None,
    precision: Precision | None = None,
    region: str | None = None,
    assumptions: Assumptions | None = None,
    max_hosts: int | None = None,
    environment: str | None = None,
    allowed_types: Mapping[str, Sequence[str]] | None = None,
    spot_share: float | None = None,
    allowed_source: str = "",
    hosts_per_replica: int = 1,
) -> Choice:
    """The cheapest machine per million tokens on `cloud` (and `families`) that a fleet can serve.

    Priced in `region` at `purchase` (the fleet's market); a `spot_share` strictly between 0 and 1
    (a fleet mixing spot with on-demand or reserved machines) ranks every machine at the fleet's
    blended rate instead. With an `environment`, only the machines allowed-accelerator-types allows
    there (`allowed_types`, default the pack's default config; `allowed_source` names the config
    file they came from) are candidates; when none of them holds the model, the pick is made among
    all and its notes say why it lies outside. Raises InputError for bad input and NothingFitsError (an
    InputError) when nothing fits.
    """

    def sized(allowed: Sequence[str] | None = None, where: str = "") -> Sizing:
        return size(
            model,
            traffic,
            precision=precision,
            cloud=cloud,
            purchase=purchase,
            region=region,
            families=families,
            assumptions=assumptions,
            max_hosts=max_hosts,
            allowed=allowed,
            allowed_where=where,
            spot_share=spot_share,
            hosts_per_replica=hosts_per_replica,
        )

    if region is not None and region not in _regions():
        # A region the planner does not know (the catalog's zone tables): priced where the catalog
        # does, and said so with the pick rather than failing the fleet.
        choice = choose_instance_type(
            model,
            traffic,
            cloud,
            purchase,
            families=families,
            precision=precision,
            assumptions=assumptions,
            max_hosts=max_hosts,
            environment=environment,
            allowed_types=allowed_types,
            spot_share=spot_share,
            allowed_source=allowed_source,
            hosts_per_replica=hosts_per_replica,
        )
        priced = "the pick is priced in each machine's reference region"
        unknown = f"{region} is not a region the catalog knows; {priced}"
        return replace(choice, notes=(unknown, *choice.notes))
    if environment is None and allowed_types is None:
        sizing = sized()
        return Choice(sizing.best, sizing)
    patterns, key = allowed_patterns(environment, allowed_types)
    if patterns is None or "*" in patterns:  # no entry, or every type allowed
        sizing = sized()
        return Choice(sizing.best, sizing)
    of = f" of {allowed_source}" if allowed_source else ""
    where = f"environment {environment!r} (allowedTypes[{key!r}]{of})"
    try:
        sizing = sized(patterns, where)
    except NothingFitsError:
        sizing = sized()
        widen = f"widen allowedTypes[{key!r}] in the policy config (e.g. add {sizing.best.instance_type!r})"
        note = (
            f"no machine allowed-accelerator-types allows in {where}, {describe_patterns(patterns)},"
            f" can serve {sizing.model.name} with this traffic, so the pick lies outside them and the"
            f" policy will refuse it: {widen}, or serve a smaller model, format or traffic"
        )
        return Choice(sizing.best, sizing, (note,))
    return Choice(sizing.best, sizing, (f"among the machines allowed in {where}",))


def check_fit(
    model: str | ModelSpec,
    traffic: Traffic,
    instance_type_name: str,
    *,
    cloud: Cloud | str | None = None,
    precision: Precision | None = None,
    assumptions: Assumptions | None = None,
    input_name: str = "instance_type",
    hosts_per_replica: int = 1,
) -> list[Problem]:
    """Problems when `model` with `traffic` does not fit `instance_type_name` (empty when it does).

    `input_name` is the config key the problem names (e.g.
    "inference-infra:awsGpuFleets[0].instanceType").
    """
    precision = precision or Precision()
    assumptions = assumptions or Assumptions()
    problems = validate_request(model, traffic, precision, assumptions, cloud)
    try:
        machine = instance_type(instance_type_name, cloud)
    except CatalogError as e:
        problems.append(Problem(input_name, instance_type_name, f"is not in the accelerator catalog ({e})"))
        return problems
    if problems:
        return problems
    spec = model_spec(model)
    hosts = hosts_per_replica
    layout = fit(spec, traffic, precision, assumptions, machine, hosts)
    fewer = fit(spec, traffic, precision, assumptions, machine, hosts - 1) if hosts > 1 else None
    reasons = servable_problems(spec, precision, layout, fewer)
    if not reasons:
        return []
    return [
        Problem(
            input_name,
            instance_type_name,
            f"cannot serve this model: {_why(spec, reasons, traffic, precision)}",
        )
    ]


def _why(spec: ModelSpec, reasons: Sequence[str], traffic: Traffic, precision: Precision) -> str:
    command = (
        f"inference-infra size --model {spec.name} --quant {precision.weights.value}"
        f" --kv-quant {precision.kv.value} --context {traffic.context_tokens}"
        f" --concurrency {traffic.concurrency}"
    )
    return f"{'; '.join(reasons)}; `{command}` lists the machines a fleet can serve it on"


@dataclass(frozen=True)
class Resolution:
    """A fleet's instance type after the planner: chosen, checked, or problems."""

    instance_type: str | None
    choice: Choice | None = None  # set when the planner chose the type
    problems: tuple[Problem, ...] = ()
    note: str = ""  # one line for `plan` output
    hosts_per_replica: int = 1  # machines one replica spans (Kubernetes GPU pools: a LeaderWorkerSet group)


def resolve_instance_type(
    *,
    instance_type_name: str | None,
    model: str | ModelSpec | None,
    traffic: Traffic | None,
    cloud: Cloud | str,
    purchase: PriceModel = PriceModel.ON_DEMAND,
    families: Collection[AcceleratorFamily] | None = None,
    precision: Precision | None = None,
    instance_type_key: str = "instanceType",
    model_key: str = "model",
    max_hosts: int | None = None,
    region: str | None = None,
    environment: str | None = None,
    allowed_types: Mapping[str, Sequence[str]] | None = None,
    spot_share: float | None = None,
    allowed_source: str = "",
    hosts_per_replica: int | None = 1,
    max_replica_hosts: int = 1,
) -> Resolution:
    """What a fleet's validate() calls with its config.

    - instance type and model: the type is checked for fit (problems carry the memory figures);
    - model only: the planner's cheapest fitting machine on `cloud` within `families`;
    - instance type only: returned unchanged; neither: a problem.

    `hosts_per_replica`: machines one replica spans (1: every VM fleet). None lets the planner take the
    fewest hosts, up to `max_replica_hosts`, at which some machine serves the model (a named machine: the
    fewest at which it does), so a model one host holds is never split.
    """
    if hosts_per_replica is None:
        return _fewest_hosts(
            max_replica_hosts,
            instance_type_name=instance_type_name,
            model=model,
            traffic=traffic,
            cloud=cloud,
            purchase=purchase,
            families=families,
            precision=precision,
            instance_type_key=instance_type_key,
            model_key=model_key,
            max_hosts=max_hosts,
            region=region,
            environment=environment,
            allowed_types=allowed_types,
            spot_share=spot_share,
            allowed_source=allowed_source,
        )
    hosts = hosts_per_replica
    if model is None or traffic is None:
        if instance_type_name is None:
            return Resolution(
                None, problems=(Problem(instance_type_key, None, f"is required unless {model_key} is set"),)
            )
        return Resolution(instance_type_name)
    if instance_type_name is not None:
        problems = check_fit(
            model,
            traffic,
            instance_type_name,
            cloud=cloud,
            precision=precision,
            input_name=instance_type_key,
            hosts_per_replica=hosts,
        )
        if problems:
            return Resolution(instance_type_name, problems=tuple(problems), hosts_per_replica=hosts)
        spec, precision = model_spec(model), precision or Precision()
        layout = fit(spec, traffic, precision, Assumptions(), instance_type(instance_type_name, cloud), hosts)
        over = f" x PP={hosts} over {hosts} x {instance_type_name} per replica" if hosts > 1 else ""
        note = (
            f"{instance_type_name} checked: {spec.name} fits at TP={layout.tensor_parallel}{over},"
            f" {layout.memory_utilization:.0%} of {layout.hardware.unit_name} memory"
        )
        return Resolution(instance_type_name, note=note, hosts_per_replica=hosts)
    try:
        choice = choose_instance_type(
            model,
            traffic,
            cloud,
            purchase,
            families=families,
            precision=precision,
            max_hosts=max_hosts,
            region=region,
            environment=environment,
            allowed_types=allowed_types,
            spot_share=spot_share,
            allowed_source=allowed_source,
            hosts_per_replica=hosts,
        )
    except NothingFitsError as e:
        shown = model.name if isinstance(model, ModelSpec) else model
        where = f"{Cloud(cloud).value} machine this fleet can use"
        return Resolution(None, problems=(Problem(model_key, shown, f"fits no {where}: {e}"),))
    except InputError as e:
        return Resolution(None, problems=tuple(_under(model_key, p) for p in e.problems))
    return Resolution(
        choice.instance_type, choice=choice, note=f"planner chose {choice.summary()}", hosts_per_replica=hosts
    )


def _fewest_hosts(most: int, **query: object) -> Resolution:
    """resolve_instance_type at 1, 2, ... `most` hosts per replica: the first that resolves without
    problems, else the one-host answer (its problems say why nothing serves it; the hosts it would
    need are said when some count up to `most` would do)."""
    first = resolve_instance_type(hosts_per_replica=1, **query)  # type: ignore[arg-type]
    if not first.problems or most <= 1:
        return first
    for hosts in range(2, min(most, MAX_REPLICA_HOSTS) + 1):
        found = resolve_instance_type(hosts_per_replica=hosts, **query)  # type: ignore[arg-type]
        if not found.problems:
            return found
    return first


def _under(model_key: str, problem: Problem) -> Problem:
    """A planner problem renamed to the config key it came from (context_tokens -> model.contextTokens)."""
    if problem.input == "model":
        return Problem(model_key, problem.value, problem.allowed)
    head, *rest = problem.input.split("_")
    return Problem(f"{model_key}.{head}{''.join(w.title() for w in rest)}", problem.value, problem.allowed)
