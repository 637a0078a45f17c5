"""Capacity planner: from a model and its traffic to memory, machine, throughput and cost.

    from inference_infra.components.planner import Precision, Quantization, Traffic, size

    sizing = size("llama-3.1-70b", Traffic(context_tokens=8192, concurrency=32),
                  precision=Precision(weights=Quantization.FP8), cloud="aws")
    sizing.memory.kv_cache_gib        # 80.0
    sizing.best.instance_type         # cheapest per million tokens that fits
    sizing.best.explanation()         # memory per device, TP degree, bound, price
    sizing.refused                    # machines a fleet would refuse, each with why (servable.py)

Pure code over the accelerator catalog: no Pulumi, no network. See README.md
for the model (memory terms, fit rule, roofline, cost) and its assumptions.
"""

from inference_infra.components.planner.assumptions import Assumptions, validate_assumptions
from inference_infra.components.planner.cost import Option, rank, usd_per_million_tokens
from inference_infra.components.planner.fit import Fit, Hardware, fit, hardware, tensor_parallel_degrees
from inference_infra.components.planner.memory import (
    GIB,
    DeviceMemory,
    MemoryBudget,
    Traffic,
    device_memory,
    memory_budget,
    validate_traffic,
)
from inference_infra.components.planner.models import (
    PRESETS,
    ModelSpec,
    model_spec,
    preset_names,
    validate_model_spec,
)
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.servable import ENGINE_SUPPORT, servable_problems
from inference_infra.components.planner.sizing import (
    NothingFitsError,
    Refusal,
    Sizing,
    candidate_instances,
    size,
    validate_request,
)
from inference_infra.components.planner.throughput import Throughput, estimate
from inference_infra.components.planner.wiring import (
    Choice,
    Resolution,
    check_fit,
    choose_instance_type,
    resolve_instance_type,
)

__all__ = [
    "ENGINE_SUPPORT",
    "GIB",
    "PRESETS",
    "Assumptions",
    "Choice",
    "DeviceMemory",
    "Fit",
    "Hardware",
    "MemoryBudget",
    "ModelSpec",
    "NothingFitsError",
    "Option",
    "Precision",
    "Quantization",
    "Refusal",
    "Resolution",
    "Sizing",
    "Throughput",
    "Traffic",
    "candidate_instances",
    "check_fit",
    "choose_instance_type",
    "device_memory",
    "estimate",
    "fit",
    "hardware",
    "memory_budget",
    "model_spec",
    "preset_names",
    "rank",
    "resolve_instance_type",
    "servable_problems",
    "size",
    "tensor_parallel_degrees",
    "usd_per_million_tokens",
    "validate_assumptions",
    "validate_model_spec",
    "validate_request",
    "validate_traffic",
]
