"""Replay a request trace against an elastic pool (pure; `inference-infra simulate`).

    from inference_infra.components.simulate import build_pool, read_trace, replay

    trace = read_trace("benchmarks/data/AzureLLMInferenceTrace_conv.csv")
    pool = build_pool(name="llama-8b", model=ServedModel(...), machine="g6e.xlarge", peak=8, trace=trace)
    result = replay(trace, pool)
    result.as_json()["cost"]      # elastic vs the static fleet vs the oracle

The pool's numbers come from the fleets' own planning (`fleet.elastic.plan_scaling`,
`serving.plan_serving`, the planner's step model); see replay.py for what the replay assumes.
"""

from inference_infra.components.simulate.plot import render_svg
from inference_infra.components.simulate.pool import build_pool, mean_context_tokens
from inference_infra.components.simulate.replay import Autoscaler, Launch, Minute, Pool, Result, replay
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.trace import Request, Trace, TraceError, parse_trace, read_trace

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
    "build_pool",
    "mean_context_tokens",
    "parse_trace",
    "read_trace",
    "render_svg",
    "replay",
]
