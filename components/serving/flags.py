"""An engine's command-line flags from the capacity planner's layout, checked against vLLM's own options.

`plan_engines` turns a model, its traffic and formats, and the machine into an
`EngineConfig`: the tensor-parallel degree the planner chose, one engine per
tensor-parallel group when a group is smaller than the node (each on its own
port), the context as `--max-model-len`, the busiest replica's sequences as
`--max-num-seqs`, the planner's memory ceiling as `--gpu-memory-utilization`,
the weight and KV-cache formats as `--dtype` / `--quantization` /
`--kv-cache-dtype`, prefix caching on (not on Neuron, which gets
`--device neuron`), and the fleet's model as `--served-model-name`.

Every flag, ours and a fleet's `extra_args`, is checked against the option
table of the family's own pinned vLLM (`data/vllm-options-<family>.json`,
generated from that version's source by `vllm_options.py`): the option must
exist and its value be one of the version's fixed choices. A family whose
pinned version has no table serves nothing (fail closed).

Some options are never plain tuning (RESTRICTED_OPTIONS): secret-bearing ones (`--api-key`, `--hf-token`)
are refused outright, since a flag lands in clear in user data and units (the engines' API key comes from
a secret store at start instead); code-loading ones (`--trust-remote-code`, plugins, middleware, worker
and scheduler classes, pickle load formats, local media reads) are refused unless the fleet gives a
reason for each (`ServedModel.engine_args_reasons`). The served model name passes the same allow-list as
every other string that reaches a unit (quoting.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from inference_infra.components.catalog import Cloud, instance_type
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.planner import Assumptions, Precision, Quantization, Traffic, fit, model_spec
from inference_infra.components.planner.fit import hardware
from inference_infra.components.serving.engines import (
    FIRST_ENGINE_PORT,
    METRICS_PORT_OFFSET,
    EngineFamily,
    engine_family,
    engine_image,
)
from inference_infra.components.serving.quoting import SERVED_NAME_RULE, served_name_ok

# Flags the plan sets; a fleet's extra_args may not set them again.
MANAGED_OPTIONS = frozenset(
    {
        "--model",
        "--host",
        "--port",
        "--served-model-name",
        "--tensor-parallel-size",
        "--max-model-len",
        "--max-num-seqs",
        "--gpu-memory-utilization",
        "--quantization",
        "--kv-cache-dtype",
        "--dtype",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--device",
        # The stages over hosts (FleetPlan.hosts_per_replica) and the group's multi-node flags
        # (k8s/pool_lws.multi_node_args): argparse keeps an option's last value, so an engine arg given
        # after the plan's would undo its memory fit, or a leader's rank, peer address or API server.
        "--pipeline-parallel-size",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--master-port",
        "--headless",
        "--distributed-timeout-seconds",
    }
)
# A value must survive systemd's ExecStart= parsing unchanged: no quoting, escapes, specifiers or variables.
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.,:/=+@{}\[\]-]+$")

# Options of the pinned vLLM versions (data/vllm-options-*.json, read 2026-11-25) that are not tuning:
# option -> (kind, why). "secret": refused always (a flag is rendered in clear into user data and a unit).
# "code": loads code or reads local files on a request's behalf; refused unless the fleet gives a reason.
RESTRICTED_OPTIONS: dict[str, tuple[str, str]] = {
    "--api-key": (
        "secret",
        "puts the API key in clear in user data and the unit; the fleet's api_key "
        "setting fetches it from a secret store at engine start",
    ),
    "--hf-token": ("secret", "puts a Hugging Face token in clear in user data; engines run offline"),
    # vLLM reads a YAML file of arguments (vllm/utils FlexibleArgumentParser, `--config`): it can set any
    # option, the refused and the restricted ones included, past every check here.
    "--config": ("refused", "reads engine options from a file, past the checks on each option"),
    "--trust-remote-code": ("code", "runs the checkpoint's own Python code"),
    "--tool-parser-plugin": ("code", "imports a Python file as a tool parser"),
    "--reasoning-parser-plugin": ("code", "imports a Python file as a reasoning parser"),
    "--middleware": ("code", "imports and runs ASGI middleware by name"),
    "--worker-extension-cls": ("code", "imports a worker extension class by name"),
    "--worker-cls": ("code", "imports a worker class by name"),
    "--scheduler-cls": ("code", "imports a scheduler class by name"),
    "--logits-processors": ("code", "imports logits processors by name"),
    "--logits-processor-pattern": ("code", "lets requests name logits processors to import"),
    "--io-processor-plugin": ("code", "loads an IO processor plugin"),
    "--model-class-overrides": ("code", "maps architectures to other model classes"),
    "--log-config-file": ("code", "logging dictConfig can instantiate any class"),
    "--kv-transfer-config": ("code", "may name a KV connector module to import"),
    "--trust-request-chat-template": ("code", "lets requests supply chat templates"),
    "--allowed-local-media-path": ("code", "lets requests read files on the engine's filesystem"),
    "--load-format": ("code", "pt, npcache and tensorizer load pickled or serialized code"),
}
# --load-format values that read only tensors (the rest need a reason).
SAFE_LOAD_FORMATS = frozenset(
    {"auto", "safetensors", "fastsafetensors", "gguf", "mistral", "bitsandbytes", "dummy", "sharded_state"}
)
# Allowed with a reason, these let the weights hold Python or pickle files (the verifier's allow_code).
CODE_IN_WEIGHTS = frozenset({"--trust-remote-code", "--load-format"})
MIN_REASON_CHARS = 12

_DTYPE = {Quantization.BF16: "bfloat16", Quantization.FP16: "float16", Quantization.FP32: "float32"}
_KV_CACHE_DTYPE = {
    Quantization.BF16: "bfloat16",
    Quantization.FP16: "float16",
    Quantization.FP8: "fp8",
    Quantization.INT8: "int8_per_token_head",
    Quantization.INT4: "int4_per_token_head",
}


@dataclass(frozen=True, kw_only=True)
class OptionTable:
    """One pinned engine's `vllm serve` options, generated from that version's source (vllm_options.py)."""

    family: EngineFamily
    engine_version: str
    exact: bool  # False: bracketed by neighbouring sources (their intersection), see `note`
    sources: tuple[str, ...]
    note: str
    as_of: str
    options: dict[str, tuple[bool, tuple[str, ...] | None]]  # option -> (takes --no-<name>, choices)

    @property
    def label(self) -> str:
        return f"vLLM {self.engine_version} ({self.family.value})"


def option_table_path(family: EngineFamily) -> str:
    return f"vllm-options-{family.value}.json"


@cache
def option_table(family: EngineFamily) -> OptionTable | None:
    """The option table of the family's pinned engine version; None (fail closed) when there is none."""
    data = resources.files("inference_infra.components.serving.data").joinpath(option_table_path(family))
    if not data.is_file():
        return None
    document = json.loads(data.read_text())
    if (
        document.get("family") != family.value
        or document.get("engine_version") != engine_image(family).engine_version
    ):
        return None  # a table of another version is never used in its place
    return OptionTable(
        family=family,
        engine_version=document["engine_version"],
        exact=bool(document["exact"]),
        sources=tuple(document["sources"]),
        note=document["note"],
        as_of=document["as_of"],
        options={
            row["option"]: (bool(row["boolean"]), tuple(row["choices"]) if "choices" in row else None)
            for row in document["options"]
        },
    )


def vllm_options(family: EngineFamily = EngineFamily.NVIDIA_VLLM) -> dict[str, bool]:
    """The pinned vLLM's `vllm serve` options for a family: option string -> also takes --no-<name>."""
    table = option_table(family)
    return {} if table is None else {o: b for o, (b, _) in table.options.items()}


def known_option(option: str, family: EngineFamily = EngineFamily.NVIDIA_VLLM) -> bool:
    options = vllm_options(family)
    if option in options:
        return True
    return option.startswith("--no-") and options.get(f"--{option[5:]}", False)


def _missing_table(family: EngineFamily, key: str) -> Problem:
    version = engine_image(family).engine_version
    return Problem(
        key,
        f"{family.value} (vLLM {version})",
        f"cannot be checked: there is no option table generated from vLLM {version}'s own source "
        f"(components/serving/data/{option_table_path(family)}, made by vllm_options.py), and a table of "
        "another version is not used in its place; generate it, or do not serve a model on this family",
    )


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """What one node runs: `engines` engines of `tensor_parallel` units each."""

    family: EngineFamily
    served_model_name: str
    tensor_parallel: int
    engines: int  # one per tensor-parallel group the node holds
    max_model_len: int
    max_num_seqs: int
    memory_utilization: float
    weights: Quantization
    kv_cache: Quantization | None
    extra_args: tuple[str, ...] = ()
    first_port: int = FIRST_ENGINE_PORT
    devices_per_node: int = 1  # accelerator devices (e.g. /dev/neuron0..N-1 on Neuron)
    # Restricted extra_args allowed, each with its reason (ServedModel.engine_args_reasons).
    arg_reasons: tuple[tuple[str, str], ...] = ()
    # Machines one engine spans: pipeline-parallel stages, one per host (a Kubernetes LeaderWorkerSet
    # group); 1 on every VM fleet. The pod renderer adds each host's multi-node flags.
    pipeline_parallel: int = 1

    @property
    def ports(self) -> list[int]:
        return [self.first_port + i for i in range(self.engines)]

    @property
    def metrics_ports(self) -> list[int]:
        """Each engine's metrics-only port (the node's /metrics proxy); the API port is the balancer's."""
        return [port + METRICS_PORT_OFFSET for port in self.ports]

    @property
    def allows_code(self) -> bool:
        """The weights may hold Python or pickle files: a code-loading flag that needs them is allowed."""
        return allows_code(self.extra_args, dict(self.arg_reasons))

    def units_of(self, index: int) -> list[int]:
        """The accelerator units (GPUs, NeuronCores, TPU chips) engine `index` owns."""
        start = index * self.tensor_parallel
        return list(range(start, start + self.tensor_parallel))


def plan_engines(
    *,
    model: str,
    traffic: Traffic,
    precision: Precision | None,
    instance_type_name: str,
    cloud: Cloud | str,
    extra_args: Sequence[str] = (),
    first_port: int = FIRST_ENGINE_PORT,
    assumptions: Assumptions | None = None,
    arg_reasons: Mapping[str, str] | None = None,
    hosts_per_replica: int = 1,
) -> EngineConfig:
    """The engines a node of `instance_type_name` runs for `model` (the planner's layout; it must fit);
    `hosts_per_replica` > 1: one engine over that many such nodes (pipeline parallel)."""
    precision = precision or Precision()
    assumptions = assumptions or Assumptions()
    machine = instance_type(instance_type_name, cloud)  # unknown: CatalogError naming close matches
    spec = model_spec(model)
    layout = fit(spec, traffic, precision, assumptions, machine, hosts_per_replica)
    if not layout.fits:
        raise InputError(f"{spec.name} does not fit {instance_type_name}: {layout.problem}")
    return EngineConfig(
        family=engine_family(hardware(machine).device.family),
        served_model_name=spec.name,
        tensor_parallel=layout.tensor_parallel,
        engines=layout.replicas,
        max_model_len=traffic.context_tokens,
        max_num_seqs=layout.sequences_per_replica,
        memory_utilization=assumptions.max_memory_utilization,
        weights=precision.weights,
        kv_cache=precision.kv_cache,
        extra_args=tuple(extra_args),
        first_port=first_port,
        devices_per_node=machine.accelerator_count,
        arg_reasons=tuple(sorted((arg_reasons or {}).items())),
        pipeline_parallel=layout.hosts,
    )


def engine_args(config: EngineConfig, index: int, model_path: str, port: str | None = None) -> list[str]:
    """`vllm serve` arguments of engine `index` (after the image's entrypoint); `port` overrides its port."""
    args = [
        "--model",
        model_path,
        "--served-model-name",
        config.served_model_name,
        "--host",
        "0.0.0.0",
        "--port",
        port or str(config.ports[index]),
        "--tensor-parallel-size",
        str(config.tensor_parallel),
        *(
            ["--pipeline-parallel-size", str(config.pipeline_parallel)]
            if config.pipeline_parallel > 1
            else []
        ),
        "--max-model-len",
        str(config.max_model_len),
        "--max-num-seqs",
        str(config.max_num_seqs),
    ]
    if config.family is not EngineFamily.NEURON_VLLM:
        # Neuron sizes its KV cache from --max-num-seqs x --max-model-len at compile time.
        args += ["--gpu-memory-utilization", f"{config.memory_utilization:g}"]
    if config.weights in _DTYPE:
        args += ["--dtype", _DTYPE[config.weights]]
    elif config.weights is Quantization.FP8:
        args += ["--quantization", "fp8"]  # online FP8 from the 16-bit checkpoint
    # INT8 / INT4: the checkpoint is quantized (AWQ, GPTQ, compressed-tensors); vLLM reads its method.
    kv = (
        "auto"
        if config.kv_cache is None or config.kv_cache is config.weights
        else _KV_CACHE_DTYPE[config.kv_cache]
    )
    args += ["--kv-cache-dtype", kv]
    if config.family is EngineFamily.NEURON_VLLM:
        # vLLM 0.9.1 on Neuron (vllm/platforms/neuron.py, check_and_update_config) sets the block size to
        # --max-model-len, one block per sequence: prefix caching has nothing to share, so it stays off.
        # --device neuron is what AWS's Neuron vLLM guides pass; the DLC's build also detects it.
        args += ["--device", "neuron"]
    else:
        args += ["--enable-prefix-caching"]
    return args + list(config.extra_args)


def validate_engine(config: EngineConfig, key: str = "engine_args") -> list[Problem]:
    """Problems with an engine config: flags against its own pinned version, formats, ports, extra args."""
    table = option_table(config.family)
    if table is None:
        return [_missing_table(config.family, "engine")]
    problems = validate_extra_args(config.extra_args, key, config.family, dict(config.arg_reasons))
    if not served_name_ok(config.served_model_name):
        problems.append(Problem("served_model_name", config.served_model_name, SERVED_NAME_RULE))
        return problems  # it is in every rendered flag list below
    problems += _rendered_problems(config, table)
    if config.kv_cache is Quantization.FP32 and config.weights is not Quantization.FP32:
        problems.append(
            Problem(
                "kv_cache",
                config.kv_cache.value,
                "must not be wider than the weights (vLLM has no fp32 cache)",
            )
        )
    last = config.first_port + config.engines - 1
    if config.first_port < 1024 or last > 65535:
        problems.append(
            Problem(
                "serving_port",
                config.first_port,
                f"must leave room for {config.engines} engine ports up to 65535",
            )
        )
    return problems


def _rendered_problems(config: EngineConfig, table: OptionTable) -> list[Problem]:
    """The plan's own flags must be options of this version, and their values among its choices."""
    rendered = engine_args(config, 0, "/models")
    planned = rendered[: len(rendered) - len(config.extra_args)]
    problems = []
    for i, token in enumerate(planned):
        if not token.startswith("--"):
            continue
        found = table.options.get(token)
        if found is None:
            problems.append(
                Problem("engine", token, f"is not an option of {table.label}; the plan cannot set it")
            )
            continue
        _, choices = found
        value = planned[i + 1] if i + 1 < len(planned) and not planned[i + 1].startswith("--") else None
        if choices is not None and value is not None and value not in choices:
            problems.append(
                Problem(
                    "engine",
                    f"{token} {value}",
                    f"is not accepted by {table.label}: {token} takes one of {', '.join(choices)} "
                    "(change the fleet's precision)",
                )
            )
    return problems


def allows_code(extra_args: Sequence[str], reasons: Mapping[str, str]) -> bool:
    """A code-loading flag that needs Python or pickle files in the weights is set and allowed."""
    return any(
        option in CODE_IN_WEIGHTS and _restricted(option, value) and _reason_ok(reasons.get(option))
        for option, value in _options(extra_args)
    )


def option_names(extra_args: Sequence[str]) -> list[str]:
    """The options an argument list sets (`--x=v`, `--x v` or a bare `--flag`), in order."""
    return [option for option, _ in _options(extra_args)]


def _options(extra_args: Sequence[str]) -> list[tuple[str, str | None]]:
    """(option, value) pairs of an argument list: `--x=v`, `--x v` or a bare `--flag`."""
    found: list[tuple[str, str | None]] = []
    for i, token in enumerate(extra_args):
        if not token.startswith("--"):
            continue
        option, eq, value = token.partition("=")
        if eq:
            found.append((option, value))
        elif i + 1 < len(extra_args) and not extra_args[i + 1].startswith("-"):
            found.append((option, extra_args[i + 1]))
        else:
            found.append((option, None))
    return found


def _restricted(option: str, value: str | None) -> bool:
    if option not in RESTRICTED_OPTIONS:
        return False
    if option == "--load-format":
        return value is not None and value not in SAFE_LOAD_FORMATS
    return True


def _reason_ok(reason: str | None) -> bool:
    return isinstance(reason, str) and len(reason.strip()) >= MIN_REASON_CHARS


def restricted_problems(
    extra_args: Sequence[str], reasons: Mapping[str, str], key: str = "engine_args"
) -> list[Problem]:
    """Secret-bearing options refused; code-loading ones only with a reason; reasons for what is set."""
    problems: list[Problem] = []
    reasons_key = f"{key}_reasons"
    set_options = set()
    for option, value in _options(extra_args):
        set_options.add(option)
        if not _restricted(option, value):
            continue
        kind, why = RESTRICTED_OPTIONS[option]
        shown = option if value is None else f"{option} {value}"
        if kind in ("secret", "refused"):
            problems.append(Problem(key, shown, f"is refused: it {why}"))
        elif not _reason_ok(reasons.get(option)):
            problems.append(
                Problem(
                    key,
                    shown,
                    f"is refused without a reason: it {why}. Allow it with {reasons_key}: "
                    f"{{{option!r}: '<why this fleet needs it, who reviewed it>'}} (at least "
                    f"{MIN_REASON_CHARS} characters)",
                )
            )
    for option, reason in reasons.items():
        if option not in set_options:
            problems.append(
                Problem(f"{reasons_key}[{option!r}]", reason, f"names an option {key} does not set")
            )
        elif option not in RESTRICTED_OPTIONS:
            problems.append(
                Problem(f"{reasons_key}[{option!r}]", reason, "names an option that needs no reason")
            )
    return problems


def validate_extra_args(
    extra_args: Sequence[str],
    key: str = "engine_args",
    family: EngineFamily = EngineFamily.NVIDIA_VLLM,
    reasons: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Each `--option` must be an option of the family's pinned vLLM, not one the plan sets; values plain;
    restricted options refused (secrets) or allowed only with a reason (code)."""
    table = option_table(family)
    if table is None:
        return [_missing_table(family, key)] if extra_args else []
    problems: list[Problem] = restricted_problems(extra_args, reasons or {}, key)
    expect_option = True
    last_option: str | None = None
    for i, token in enumerate(extra_args):
        where = f"{key}[{i}]"
        if token.startswith("-"):
            option, _, value = token.partition("=")
            last_option = None
            if not option.startswith("--"):
                problems.append(Problem(where, token, "must use the long form (--option), as vLLM's docs do"))
            elif option in MANAGED_OPTIONS:
                problems.append(
                    Problem(where, token, "is set from the capacity plan; change the fleet's model instead")
                )
            elif not known_option(option, family):
                problems.append(
                    Problem(where, token, f"is not an option of {table.label} (`vllm serve --help`)")
                )
            else:
                last_option = option
            if value and not _SAFE_VALUE.fullmatch(value):
                problems.append(
                    Problem(where, token, "must not hold quotes, spaces, '$', '%' or backslashes")
                )
            elif value and last_option is not None:
                problems += _choice_problem(table, last_option, value, where, token)
            expect_option = bool(value)
            continue
        if expect_option:
            problems.append(Problem(where, token, "must follow an --option (a value needs its option first)"))
        elif not _SAFE_VALUE.fullmatch(token):
            problems.append(Problem(where, token, "must not hold quotes, spaces, '$', '%' or backslashes"))
        elif last_option is not None:
            problems += _choice_problem(table, last_option, token, where, token)
        expect_option = True
    return problems


def _choice_problem(table: OptionTable, option: str, value: str, where: str, token: str) -> list[Problem]:
    choices = table.options.get(option, (False, None))[1]
    if choices is None or value in choices:
        return []
    return [Problem(where, token, f"{option} of {table.label} takes one of {', '.join(choices)}")]
