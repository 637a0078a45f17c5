"""How long a request holds a machine: the capacity planner's step model, per request.

The replay does not invent a serving model: the time to first token and the time per output token
come from the planner's own replay of the engine's steps (`planner.throughput`):

- prefill: `first_token_seconds` for the request's prompt on the machine's layout, with the
  replica's other planned sequences decoding beside it (vLLM's chunked prefill: ceil(P / (B - b + 1))
  steps). It is taken at the planned batch (a busy replica), so it is an upper bound for a quiet one;
  the planner's figures differ by a few percent between one and a full batch;
- decode: `decode_step_seconds` at the planned batch, each line reading the trace's mean cached
  context (prompt + half the output), once per output token after the first.

- prefill capacity: an engine processes at most its step's token budget (`max_num_batched_tokens`,
  chunked prefill) of prompt tokens a step, less one token for each sequence decoding beside them.
  `prefill_tokens_per_s` is that rate at the planned batch; a prompt occupies its engine's prefill
  for P / rate seconds, so prompts that arrive together wait for each other's chunks (the replay's
  prefill lanes, one per engine). Before this the replay let every slot prefill at full speed at
  once, which overstated a machine's capacity about 3x on the prompt-heavy code trace.

A request holds one of the machine's slots (the sum of its engines' `--max-num-seqs`) from its
admission until its last token: the wait for its engine's prefill, its prefill, then
(output - 1) x TPOT. Prompts are rounded up to a multiple of 16 tokens (vLLM's KV block) to share
the prefill figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from inference_infra.components.catalog import find_instance_type
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.planner import Assumptions, Fit, Precision, Traffic, fit, model_spec
from inference_infra.components.planner.engine import served_engine
from inference_infra.components.planner.models import ModelSpec
from inference_infra.components.planner.throughput import (
    PIPELINE_EFFICIENCY,
    decode_step_seconds,
    first_token_seconds,
)
from inference_infra.components.serving.model import ServedModel

PROMPT_ROUNDING = 16  # vLLM's KV block (planner.engine.VLLM_BLOCK_TOKENS)


@dataclass
class ServiceModel:
    """One machine of a pool, as the replay sees it: slots and per-request times."""

    model: ServedModel
    machine: str
    mean_context_tokens: float  # prompt + half the output, averaged over the trace
    # Machines one replica spans (a Kubernetes LeaderWorkerSet group: TP per host, PP across hosts,
    # planner/fit.py multi_host_fit); the replay's "machine" is then the whole group.
    hosts: int = 1
    spec: ModelSpec = field(init=False, repr=False)
    layout: Fit = field(init=False, repr=False)
    tpot_seconds: float = field(init=False)
    _prefill: dict[int, float] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.spec = model_spec(self.model.name)
        self._precision: Precision = self.model.precision()
        self._assumptions = Assumptions()
        instance = find_instance_type(self.machine)
        if instance is None:
            raise InputError(
                f"machine {self.machine!r} is not in the accelerator catalog.",
                [Problem("machine", self.machine, "must be an instance type of the catalog")],
            )
        self.layout = fit(
            self.spec, self.model.traffic(), self._precision, self._assumptions, instance, self.hosts
        )
        where = self.machine if self.hosts == 1 else f"{self.hosts} x {self.machine}"
        if not self.layout.fits:
            raise InputError(
                f"{self.spec.name} does not fit {where}: {self.layout.problem}.",
                [Problem("machine", self.machine, f"must hold {self.spec.name} ({self.layout.problem})")],
            )
        # Over several hosts the decode runs through the pipeline's stages at the planner's stated
        # efficiency (throughput.pipelined); prefill is left unscaled, as the planner leaves it.
        self.tpot_seconds = decode_step_seconds(
            self.spec,
            self._precision,
            self._assumptions,
            self.layout,
            self.layout.sequences_per_replica,
            self.mean_context_tokens,
        ) / (PIPELINE_EFFICIENCY if self.hosts > 1 else 1.0)

    @property
    def slots(self) -> int:
        """In-flight requests one machine holds: engines x --max-num-seqs."""
        return self.layout.replicas * self.layout.sequences_per_replica

    @property
    def engines(self) -> int:
        """Engines (replicas) per machine: each has its own prefill."""
        return self.layout.replicas

    @property
    def max_model_len(self) -> int:
        return self.model.context_tokens

    @property
    def step_budget_tokens(self) -> int:
        """The engine's tokens per step (`max_num_batched_tokens`; a whole prompt without chunking)."""
        device = self.layout.hardware.device
        budget = self._assumptions.max_batched_tokens or served_engine(device.family).budget(
            device, self.max_model_len
        )
        return int(budget)

    @property
    def prefill_tokens_per_s(self) -> float:
        """Prompt tokens one engine prefills per second with its planned batch decoding beside them."""
        rate = self.__dict__.get("_prefill_rate")
        if rate is None:
            room = max(1, self.step_budget_tokens - (self.layout.sequences_per_replica - 1))
            prompt = max(
                PROMPT_ROUNDING, min(room, self.max_model_len - 1) // PROMPT_ROUNDING * PROMPT_ROUNDING
            )
            rate = prompt / self.prefill_seconds(prompt)
            self.__dict__["_prefill_rate"] = rate
        return rate

    def prefill_lane_seconds(self, prompt_tokens: int) -> float:
        """Seconds a prompt occupies its engine's prefill (others' prompts wait behind it)."""
        return prompt_tokens / self.prefill_tokens_per_s

    def prefill_seconds(self, prompt_tokens: int) -> float:
        """Admission to first token for a prompt of `prompt_tokens` on a busy replica."""
        key = max(PROMPT_ROUNDING, math.ceil(prompt_tokens / PROMPT_ROUNDING) * PROMPT_ROUNDING)
        key = min(key, self.max_model_len - 1)
        seconds = self._prefill.get(key)
        if seconds is None:
            traffic = Traffic(
                context_tokens=self.max_model_len,
                concurrency=self.model.concurrency,
                prompt_tokens=key,
                output_tokens=1,
            )
            seconds = first_token_seconds(self.spec, traffic, self._precision, self._assumptions, self.layout)
            self._prefill[key] = seconds
        return seconds

    def service_seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        """Seconds a request holds a slot: its prefill, then one decode step per further token."""
        return self.prefill_seconds(prompt_tokens) + max(0, output_tokens - 1) * self.tpot_seconds

    def describe(self) -> str:
        return (
            f"{self.spec.name} on {self.machine if self.hosts == 1 else f'{self.hosts} x {self.machine}'}:"
            f" {self.layout.replicas} engine(s) x"
            f" {self.layout.sequences_per_replica} sequences = {self.slots} slots; TPOT"
            f" {self.tpot_seconds * 1000:.1f} ms at a full batch; first token of a 1,024-token prompt"
            f" {self.prefill_seconds(1024) * 1000:.0f} ms; prefill {self.prefill_tokens_per_s:,.0f}"
            f" prompt tokens/s per engine (budget {self.step_budget_tokens:,} tokens a step)"
        )
