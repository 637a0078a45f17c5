"""Serving: the inference engine on every accelerator node that has a model.

- engines.py: the engine per accelerator family and its image pinned by digest;
  the ports (8000, 8001, ... one per tensor-parallel group) and the verified-weights marker;
- flags.py: the engine's flags from the capacity planner, checked against the option table of each
  family's own pinned vLLM (data/vllm-options-<family>.json);
- units.py: the systemd units that run the engines after the weights are verified;
- tpu_env.py: a TPU engine's environment that replaces the metadata server (its container cannot reach it);
- cold_start.py: boot-to-serving estimate that sizes health-check grace and slow start;
- vllm_options.py: extracts vLLM's option strings and choices from a version's source (wheel or git tree)
  into those tables.

Pure code: no Pulumi, no network.
"""

from inference_infra.components.serving.cold_start import ColdStart, WeightSource, cold_start
from inference_infra.components.serving.engines import (
    FIRST_ENGINE_PORT,
    HEALTH_PATH,
    IMAGES,
    METRICS_PATH,
    PREFETCH_UNIT,
    VERIFIED_MARKER,
    EngineFamily,
    EngineImage,
    engine_family,
    engine_image,
    engine_ports,
)
from inference_infra.components.serving.flags import (
    EngineConfig,
    OptionTable,
    engine_args,
    option_table,
    plan_engines,
    validate_engine,
    validate_extra_args,
    vllm_options,
)
from inference_infra.components.serving.units import EngineHost, EngineUnits, engine_units

__all__ = [
    "FIRST_ENGINE_PORT",
    "HEALTH_PATH",
    "IMAGES",
    "METRICS_PATH",
    "PREFETCH_UNIT",
    "VERIFIED_MARKER",
    "ColdStart",
    "EngineConfig",
    "EngineFamily",
    "EngineHost",
    "EngineImage",
    "EngineUnits",
    "OptionTable",
    "WeightSource",
    "cold_start",
    "engine_args",
    "engine_family",
    "engine_image",
    "engine_ports",
    "engine_units",
    "option_table",
    "plan_engines",
    "validate_engine",
    "validate_extra_args",
    "vllm_options",
]
