"""Replay a request trace against an elastic pool (pure; `inference-infra simulate`).

    from inference_infra.components.simulate import build_pool, read_trace, replay

    trace = read_trace("benchmarks/data/AzureLLMInferenceTrace_conv.csv")
    pool = build_pool(name="llama-8b", model=ServedModel(...), machine="g6e.xlarge", peak=8, trace=trace)
    result = replay(trace, pool, scaler_settings(pool.plan))
    result.as_json()["cost"]      # elastic vs the SLO-aware oracle, the lower bound and a static fleet

The pool's numbers come from the fleets' own planning (`fleet.elastic.plan_scaling`,
`serving.plan_serving`, the planner's step model); the autoscaler's from `settings.scaler_settings`,
the one function that reads them from the pool's plan. replay.py says what the replay assumes,
references.py what it is judged against, tune.py how `--tune` searches the settings.
"""

from __future__ import annotations

from inference_infra.components.simulate.plot import render_svg
from inference_infra.components.simulate.pool import build_pool, mean_context_tokens
from inference_infra.components.simulate.references import lower_bound_machine_seconds, slo_oracle
from inference_infra.components.simulate.replay import Launch, Minute, Pool, Result, replay
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.settings import Autoscaler, scaler_settings
from inference_infra.components.simulate.trace import Request, Trace, TraceError, parse_trace, read_trace
from inference_infra.components.simulate.workload import Workload, workload

__all__ = [
    "Autoscaler",
    "Launch",
    "Minute",
    "Pool",
    "Request",
    "Result",
    "ServiceModel",
    "Trace",
    "TraceError",
    "Workload",
    "build_pool",
    "lower_bound_machine_seconds",
    "mean_context_tokens",
    "parse_trace",
    "read_trace",
    "render_svg",
    "replay",
    "scaler_settings",
    "slo_oracle",
    "workload",
]
