"""What a fleet serves, and the serving a fleet plans for itself from it (pure).

A fleet of any cloud given a `ServedModel` and the source of its weights plans its own engines:
the machine (the capacity planner's pick, or the configured type checked for fit), the engines per
node (tensor-parallel groups, ports from the fleet's `serving_port`, flags checked against the
family's pinned vLLM) and the cold start that sizes health-check grace and slow start.
`plan_serving` is the one function the fleets call; its problems name the fleet's inputs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inference_infra.components.arguments import arg
from inference_infra.components.catalog import AcceleratorFamily, Cloud, PriceModel
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.planner import Precision, Quantization, Traffic, model_spec
from inference_infra.components.planner.models import unknown_model_problem
from inference_infra.components.planner.wiring import Resolution, resolve_instance_type
from inference_infra.components.serving.cold_start import ColdStart, WeightSource, cold_start, weights_gib
from inference_infra.components.serving.engines import FIRST_ENGINE_PORT, port_problems
from inference_infra.components.serving.flags import EngineConfig, plan_engines, validate_engine
from inference_infra.components.serving.quoting import SERVED_NAME_RULE, served_name_ok


@dataclass(frozen=True, kw_only=True)
class ServedModel:
    """The model a fleet serves and the traffic one machine must hold at once."""

    name: str = arg(
        doc="Model preset (e.g. llama-3.1-70b; `inference-infra size --help`), a Hugging Face id of one, "
        "or the path of a checkpoint's config.json."
    )
    context_tokens: int = arg(doc="Longest sequence to hold: prompt + generated tokens.", ge=1, le=10_485_760)
    concurrency: int = arg(doc="Sequences in flight at once, per machine.", ge=1, le=16_384)
    output_tokens: int | None = arg(
        None, "Generated tokens per request (throughput estimate only).", ge=1, le=10_485_760
    )
    quantization: Quantization = arg(Quantization.BF16, "Weight format.")
    kv_cache_quantization: Quantization | None = arg(
        None, "KV-cache format. Default: the weights' float type (bf16 if quantized)."
    )
    engine_args: Sequence[str] = arg(
        (),
        "More `vllm serve` arguments for the fleet's engines, e.g. [--enforce-eager]; checked against "
        "the pinned vLLM's options (flags the plan sets are refused; secret-bearing ones such as "
        "--api-key always, code-loading ones such as --trust-remote-code without a reason).",
    )
    engine_args_reasons: Mapping[str, str] = arg(
        factory=dict,
        doc="Code-loading engine_args allowed, each with the reason, e.g. {'--trust-remote-code': "
        "'vendor modeling code reviewed in SEC-123'}. --trust-remote-code (and a pickle --load-format) "
        "with a reason also lets the weights hold .py (pickle) files.",
    )

    def traffic(self) -> Traffic:
        return Traffic(
            context_tokens=self.context_tokens, concurrency=self.concurrency, output_tokens=self.output_tokens
        )

    def precision(self) -> Precision:
        return Precision(weights=self.quantization, kv_cache=self.kv_cache_quantization)


def served_model_problems(model: ServedModel, key: str = "model") -> list[Problem]:
    """The model is known and the traffic fits its window (pure; before anything is planned)."""
    try:
        spec = model_spec(model.name)
    except InputError as e:
        if model.name.strip().lower().endswith(".json"):
            if [p.input for p in e.problems] == ["model"]:  # the file is missing or not JSON
                return [Problem(f"{key}.name", e.problems[0].value, e.problems[0].allowed)]
            return [Problem(f"{key}.name", model.name, str(e).removesuffix("."))]
        return [unknown_model_problem(model.name, f"{key}.name")]
    problems = []
    if not served_name_ok(spec.name):
        source = (
            f"the served name {spec.name!r} (config.json's _name_or_path)"
            if model.name.strip().lower().endswith(".json")
            else f"the served name {spec.name!r}"
        )
        problems.append(Problem(f"{key}.name", model.name, f"gives {source}, which {SERVED_NAME_RULE}"))
    # The fields' own bounds (arg(ge=..., le=...)) are check_types', which every caller runs first: the
    # fleet skeleton (step 0), the stack's typed config and `simulate` (simulate/pool.py).
    if model.context_tokens > spec.max_context_tokens:
        problems.append(
            Problem(
                f"{key}.context_tokens",
                model.context_tokens,
                f"exceeds {spec.name}'s window of {spec.max_context_tokens:,} tokens",
            )
        )
    if model.output_tokens is not None and model.output_tokens > model.context_tokens:
        problems.append(
            Problem(
                f"{key}.output_tokens",
                model.output_tokens,
                f"must be 1..context_tokens ({model.context_tokens})",
            )
        )
    return problems


def choose_machine(
    model: ServedModel | None,
    machine: str | None,
    *,
    cloud: Cloud,
    family: AcceleratorFamily,
    spot_only: bool = False,
    max_hosts: int | None = None,
    machine_key: str = "instance_type",
    model_key: str = "model",
    region: str | None = None,
    environment: str | None = None,
    spot_share: float | None = None,
    hosts_per_replica: int | None = 1,
    max_replica_hosts: int = 1,
) -> Resolution:
    """The fleet's machine: as given (checked for fit and servability when a model is set) or the
    planner's cheapest pick among the machines a fleet can serve it on.

    A fleet of spot machines only is planned at spot prices, a fleet mixing spot with other modes at
    its blended rate (`spot_share`: the share of its machines on spot), any other at on-demand prices, in
    `region` (default: the provider's configured region, as the plan prices it). The pick keeps to
    the machines allowed-accelerator-types allows in `environment` (default: the stack's pack config's
    `environment`, else the program's registered cost tags' Environment; neither: no restriction),
    under the stack's own pack config when the offline plan read one, else the pack's default config.
    `hosts_per_replica` (None: the fewest up to `max_replica_hosts` that serve it) is 1 on every VM
    fleet; a Kubernetes GPU pool may span several (planner/wiring.py resolve_instance_type).
    """
    return resolve_instance_type(
        instance_type_name=machine,
        model=model.name if model else None,
        traffic=model.traffic() if model else None,
        precision=model.precision() if model else None,
        cloud=cloud,
        purchase=PriceModel.SPOT if spot_only else PriceModel.ON_DEMAND,
        families={family},
        instance_type_key=machine_key,
        model_key=model_key,
        max_hosts=max_hosts,
        region=region if region is not None else _provider_region(cloud),
        spot_share=spot_share,
        hosts_per_replica=hosts_per_replica,
        max_replica_hosts=max_replica_hosts,
        **_allowed_machines(environment),
    )


def _allowed_machines(environment: str | None) -> dict[str, Any]:
    """The environment and allowedTypes the pick keeps to: the stack's own pack config when the
    offline plan read one (its `environment` first, as the policy judges), else the pack's default
    config; the environment, when not given, from the program's registered cost tags."""
    from inference_infra.components.planner.allowed import stack_pack_allowed

    pack = stack_pack_allowed()
    if environment is None and pack is not None:
        environment = pack.environment
    if environment is None:
        environment = _registered_environment()
    if pack is None or environment is None:
        return {"environment": environment}
    source = "" if pack.is_default else pack.source
    return {"environment": environment, "allowed_types": pack.allowed_types, "allowed_source": source}


def _provider_region(cloud: Cloud) -> str | None:
    """The region the program's provider config sets (aws:region, gcp:region or gcp:zone's), else None."""
    import pulumi

    from inference_infra.components.pricing import default_region

    config = {
        f"{ns}:{key}": value
        for ns, keys in (("aws", ("region",)), ("gcp", ("region", "zone")))
        for key in keys
        if (value := pulumi.Config(ns).get(key))
    }
    return default_region(cloud, config)


def _registered_environment() -> str | None:
    from inference_infra.components.tagging import registered_cost_tags

    tags = registered_cost_tags()
    return tags.environment if tags is not None else None


@dataclass(frozen=True)
class FleetServing:
    """What each node of a fleet serves: its engines and how long it takes to start serving."""

    engines: EngineConfig
    cold_start: ColdStart

    @property
    def ports(self) -> list[int]:
        return self.engines.ports

    @property
    def model(self) -> str:
        return self.engines.served_model_name

    def grace_seconds(self) -> int:
        return self.cold_start.grace_seconds()

    def slow_start_seconds(self) -> int:
        return self.cold_start.slow_start_seconds()


def plan_serving(
    model: ServedModel,
    *,
    machine: str,
    cloud: Cloud,
    source: WeightSource,
    first_port: int = FIRST_ENGINE_PORT,
    key: str = "model",
    families: Collection[AcceleratorFamily] | None = None,
    hosts_per_replica: int = 1,
) -> tuple[FleetServing | None, list[Problem]]:
    """The engines a node of `machine` runs for `model`, and its cold start; or the problems.

    `families` (when given) are the accelerator families this fleet may serve on; the machine's
    family must be one of them. `hosts_per_replica` > 1: one engine over that many machines of
    `machine` (pipeline parallel; the cold start is each host's: every host fetches and verifies the
    whole folder and loads its stage).
    """
    problems = served_model_problems(model, key)
    if problems:
        return None, problems
    try:
        engines = plan_engines(
            model=model.name,
            traffic=model.traffic(),
            precision=model.precision(),
            instance_type_name=machine,
            cloud=cloud,
            extra_args=tuple(model.engine_args),
            first_port=first_port,
            arg_reasons=dict(model.engine_args_reasons),
            hosts_per_replica=hosts_per_replica,
        )
    except (ValueError, InputError) as e:
        return None, [Problem(key, model.name, str(e).removesuffix("."))]
    problems = port_problems(first_port, engines.engines)
    problems += [
        _model_key(p, key) for p in validate_engine(engines) if not (problems and p.input == "serving_port")
    ]
    if problems:
        return None, problems
    start = cold_start(
        weights_gib=weights_gib(model.name, model.precision()),
        source=source,
        instance_type=machine,
        family=engines.family,
    )
    return FleetServing(engines, start), []


def _model_key(problem: Problem, key: str) -> Problem:
    """validate_engine names its inputs after EngineConfig; on a fleet they are the model's, but for the
    ports, which are the fleet's own serving_port."""
    name = problem.input
    if name == "serving_port":
        return problem
    if name.startswith("engine_args"):
        return Problem(f"{key}.{name}", problem.value, problem.allowed)
    return Problem(f"{key}.{name}" if not name.startswith(key) else name, problem.value, problem.allowed)
