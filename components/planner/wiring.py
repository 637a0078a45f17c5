"""What the fleets and the stack config call: pick an instance type, or check one.

- `choose_instance_type`: a config that names a model and its traffic instead
  of an instance type gets the planner's cheapest option per million tokens
  among the machines the fleet can run (its cloud and accelerator family).
- `check_fit`: a config that names an instance type and a model gets
  problems (with the memory figures) when the model does not fit it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from components.catalog import AcceleratorFamily, CatalogError, Cloud, PriceModel, instance_type
from components.errors import Problem
from components.planner.assumptions import Assumptions
from components.planner.cost import Option
from components.planner.fit import Fit, fit
from components.planner.memory import Traffic
from components.planner.models import ModelSpec, model_spec
from components.planner.precision import Precision
from components.planner.sizing import Sizing, size, validate_request


@dataclass(frozen=True)
class Choice:
    """The planner's pick for a fleet, with the sizing behind it."""

    option: Option
    sizing: Sizing

    @property
    def instance_type(self) -> str:
        return self.option.instance_type

    @property
    def cloud(self) -> Cloud:
        return self.option.cloud

    @property
    def tensor_parallel(self) -> int:
        return self.option.fit.tensor_parallel

    def summary(self) -> str:
        """One line for `plan` output: which machine, why, and what it costs."""
        o, t = self.option, self.sizing.traffic
        return (
            f"{self.sizing.model.name} ({self.sizing.precision.describe()}, {t.concurrency} x"
            f" {t.context_tokens:,} tokens) -> {o.instance_type}: TP={o.fit.tensor_parallel},"
            f" {o.memory_utilization:.0%} of {o.fit.hardware.unit_name} memory, ~{o.est_tokens_per_s:,.0f}"
            f" tokens/s, ${o.hourly_usd:,.2f}/h {o.purchase.value}, ${o.usd_per_million_tokens:,.3f}"
            f" per million tokens (cheapest of {len(self.sizing.options)} that fit)"
        )


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
) -> Choice:
    """The cheapest machine per million tokens on `cloud` (and `families`) that fits.

    Raises InputError for bad input and NothingFitsError (an InputError) when
    nothing fits.
    """
    sizing = size(
        model,
        traffic,
        precision=precision,
        cloud=cloud,
        purchase=purchase,
        region=region,
        families=families,
        assumptions=assumptions,
    )
    return Choice(sizing.best, sizing)


def check_fit(
    model: str | ModelSpec,
    traffic: Traffic,
    instance_type_name: str,
    *,
    cloud: Cloud | str | None = None,
    precision: Precision | None = None,
    assumptions: Assumptions | None = None,
    input_name: str = "instance_type",
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
    layout = fit(spec, traffic, precision, assumptions, machine)
    if layout.fits:
        return []
    return [
        Problem(
            input_name,
            instance_type_name,
            f"cannot serve this model: {_why(spec, layout, traffic, precision)}",
        )
    ]


def _why(spec: ModelSpec, layout: Fit, traffic: Traffic, precision: Precision) -> str:
    command = (
        f"inference-infra size --model {spec.name} --quant {precision.weights.value}"
        f" --kv-quant {precision.kv.value} --context {traffic.context_tokens}"
        f" --concurrency {traffic.concurrency}"
    )
    return f"{layout.problem}; `{command}` lists the machines that fit"
