"""Model architectures the planner sizes: presets read from each model's config.json.

Parameter counts are derived from the architecture (`ModelSpec.params`), so a
custom spec needs only the shape; the presets' tests check the derived counts
against the figures the model cards publish.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Any

from inference_infra.components import input_size
from inference_infra.components.errors import InputError, Problem, close_matches, raise_if_invalid

_READ = date(2026, 11, 21)  # day the config.json files below were read
_HF = "https://huggingface.co/{}/blob/main/config.json"


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A decoder-only transformer, dense or mixture-of-experts (MoE)."""

    name: str  # preset key, e.g. "llama-3.1-70b"
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int  # fewer than attention_heads = grouped-query attention (GQA)
    head_dim: int
    intermediate_size: int  # MLP width (per expert for MoE)
    vocab_size: int
    max_context_tokens: int
    experts: int = 1  # MoE: experts per layer
    experts_per_token: int = 1  # MoE: experts each token is routed to
    tied_embeddings: bool = False
    attention_bias: bool = False  # q/k/v projections carry biases (Qwen2)
    hf_id: str = ""
    source: str = "custom"
    as_of: date | None = None
    notes: str = ""

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @cached_property
    def params(self) -> int:
        """All parameters: what the weights take in memory."""
        return self._count(self.experts)

    @cached_property
    def active_params(self) -> int:
        """Parameters one token passes through (all of them for a dense model)."""
        return self._count(self.experts_per_token)

    @property
    def shared_params(self) -> int:
        """Parameters every token uses: all of a dense model; attention, embeddings, norms, router of MoE."""
        return self.params - self.expert_params

    @property
    def expert_params(self) -> int:
        """Parameters in all routed experts together (0 for a dense model)."""
        return self.experts * self._expert_params if self.is_moe else 0

    @property
    def _expert_params(self) -> int:
        return self.layers * 3 * self.hidden_size * self.intermediate_size  # gate, up, down

    def _count(self, experts: int) -> int:
        h, q, kv = self.hidden_size, self.attention_heads * self.head_dim, self.kv_heads * self.head_dim
        attention = h * q + 2 * h * kv + q * h + ((q + 2 * kv) if self.attention_bias else 0)
        mlp = experts * 3 * h * self.intermediate_size + (h * self.experts if self.is_moe else 0)
        per_layer = attention + mlp + 2 * h  # two RMSNorm weights
        embeddings = self.vocab_size * h * (1 if self.tied_embeddings else 2)
        return self.layers * per_layer + embeddings + h  # + final norm

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """Keys and values of one token across all layers: 2 x layers x KV heads x head dim."""
        return 2 * self.layers * self.kv_heads * self.head_dim * bytes_per_element

    def describe(self) -> str:
        size = f"{self.params / 1e9:.1f}B parameters"
        if self.is_moe:
            active = self.active_params / 1e9
            size += f" ({active:.1f}B active, {self.experts_per_token} of {self.experts} experts)"
        attention = (
            f"{self.attention_heads} heads"
            if self.kv_heads == self.attention_heads
            else f"{self.attention_heads} query / {self.kv_heads} KV heads (GQA)"
        )
        return f"{self.name}: {size}, {self.layers} layers, {attention}, head dim {self.head_dim}"


def validate_model_spec(spec: ModelSpec) -> list[Problem]:
    """Every inconsistency in a (custom) spec."""
    problems = [
        Problem(f"model.{field}", getattr(spec, field), "must be a positive whole number")
        for field in (
            "layers",
            "hidden_size",
            "attention_heads",
            "kv_heads",
            "head_dim",
            "intermediate_size",
            "vocab_size",
            "max_context_tokens",
            "experts",
            "experts_per_token",
        )
        if not isinstance(getattr(spec, field), int) or getattr(spec, field) < 1
    ]
    if problems:
        return problems
    if spec.attention_heads % spec.kv_heads:
        problems.append(
            Problem("model.kv_heads", spec.kv_heads, f"must divide attention_heads ({spec.attention_heads})")
        )
    if spec.experts_per_token > spec.experts:
        problems.append(
            Problem("model.experts_per_token", spec.experts_per_token, f"must be <= experts ({spec.experts})")
        )
    return problems


def _preset(name: str, hf_id: str, papers: str, **shape: object) -> ModelSpec:
    return ModelSpec(name=name, hf_id=hf_id, source=f"{_HF.format(hf_id)} ; {papers}", as_of=_READ, **shape)


_LLAMA2 = "https://arxiv.org/abs/2307.09288"
_LLAMA3 = "https://arxiv.org/abs/2407.21783"
_MISTRAL = "https://arxiv.org/abs/2310.06825"
_MIXTRAL = "https://arxiv.org/abs/2401.04088"
_QWEN25 = "https://arxiv.org/abs/2412.15115"
_QWEN_YARN = "Native 32,768 tokens (config.json); 131,072 with YaRN rope scaling, per the model card."

_LLAMA_31_70B = dict(
    layers=80,
    hidden_size=8192,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    intermediate_size=28672,
    vocab_size=128256,
    max_context_tokens=131072,
)

PRESETS: tuple[ModelSpec, ...] = (
    _preset(
        "llama-2-7b",
        "meta-llama/Llama-2-7b-hf",
        _LLAMA2,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=32,
        head_dim=128,
        intermediate_size=11008,
        vocab_size=32000,
        max_context_tokens=4096,
    ),
    _preset(
        "llama-2-13b",
        "meta-llama/Llama-2-13b-hf",
        _LLAMA2,
        layers=40,
        hidden_size=5120,
        attention_heads=40,
        kv_heads=40,
        head_dim=128,
        intermediate_size=13824,
        vocab_size=32000,
        max_context_tokens=4096,
    ),
    _preset(
        "llama-2-70b",
        "meta-llama/Llama-2-70b-hf",
        _LLAMA2,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        intermediate_size=28672,
        vocab_size=32000,
        max_context_tokens=4096,
    ),
    _preset(
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B",
        _LLAMA3,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=128256,
        max_context_tokens=131072,
    ),
    _preset("llama-3.1-70b", "meta-llama/Llama-3.1-70B", _LLAMA3, **_LLAMA_31_70B),
    _preset("llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct", _LLAMA3, **_LLAMA_31_70B),
    _preset(
        "llama-3.1-405b",
        "meta-llama/Llama-3.1-405B",
        _LLAMA3,
        layers=126,
        hidden_size=16384,
        attention_heads=128,
        kv_heads=8,
        head_dim=128,
        intermediate_size=53248,
        vocab_size=128256,
        max_context_tokens=131072,
    ),
    _preset(
        "mistral-7b",
        "mistralai/Mistral-7B-v0.3",
        _MISTRAL,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=32768,
        max_context_tokens=32768,
        notes="v0.3 (no sliding window); v0.1 capped the KV cache at a 4,096-token window.",
    ),
    _preset(
        "mixtral-8x7b",
        "mistralai/Mixtral-8x7B-v0.1",
        _MIXTRAL,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=32000,
        max_context_tokens=32768,
        experts=8,
        experts_per_token=2,
    ),
    _preset(
        "mixtral-8x22b",
        "mistralai/Mixtral-8x22B-v0.1",
        _MIXTRAL,
        layers=56,
        hidden_size=6144,
        attention_heads=48,
        kv_heads=8,
        head_dim=128,
        intermediate_size=16384,
        vocab_size=32768,
        max_context_tokens=65536,
        experts=8,
        experts_per_token=2,
    ),
    _preset(
        "qwen2.5-7b",
        "Qwen/Qwen2.5-7B",
        _QWEN25,
        layers=28,
        hidden_size=3584,
        attention_heads=28,
        kv_heads=4,
        head_dim=128,
        intermediate_size=18944,
        vocab_size=152064,
        max_context_tokens=131072,
        attention_bias=True,
        notes=_QWEN_YARN,
    ),
    _preset(
        "qwen2.5-72b",
        "Qwen/Qwen2.5-72B",
        _QWEN25,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        intermediate_size=29568,
        vocab_size=152064,
        max_context_tokens=131072,
        attention_bias=True,
        notes=_QWEN_YARN,
    ),
)


# Suffixes and prefixes of Hugging Face repository names that do not change a model's shape.
_VARIANT_SUFFIXES = ("-instruct", "-chat", "-hf", "-it", "-base", "-fp8", "-awq", "-gptq")
_VERSION_SUFFIX = re.compile(r"-v\d+(\.\d+)*$")


def _key(name: str) -> str:
    """`meta-llama/Meta-Llama-3.1-70B-Instruct` -> `llama-3.1-70b`: organisation, vendor prefix,
    variant suffixes (-Instruct, -Chat, -hf) and release suffixes (-v0.1) removed, lower case."""
    key = name.strip().lower().rsplit("/", 1)[-1].removeprefix("meta-")
    changed = True
    while changed:
        changed = False
        for suffix in _VARIANT_SUFFIXES:
            if key.endswith(suffix):
                key, changed = key.removesuffix(suffix), True
        if _VERSION_SUFFIX.search(key):
            key, changed = _VERSION_SUFFIX.sub("", key), True
    return key


@functools.cache
def _index() -> dict[str, ModelSpec]:
    table: dict[str, ModelSpec] = {}
    for p in PRESETS:
        table.setdefault(_key(p.hf_id), p)
        table[p.name] = p
    return table


def preset_names() -> list[str]:
    return [p.name for p in PRESETS]


def model_spec(model: str | ModelSpec) -> ModelSpec:
    """A preset by name or Hugging Face id (`meta-llama/Llama-3.1-70B-Instruct`), a checkpoint's
    `config.json` (a path ending in .json), or a custom spec checked for consistency."""
    if isinstance(model, ModelSpec):
        raise_if_invalid(f"model {model.name!r}", validate_model_spec(model))
        return model
    if str(model).strip().lower().endswith(".json"):
        return model_from_config(Path(str(model).strip()))
    hit = _index().get(_key(str(model)))
    if hit is not None:
        return hit
    problem = unknown_model_problem(str(model))
    raise InputError(f"{problem}.", [problem])


# config.json fields: (ours, theirs); the first name present wins.
_REQUIRED_FIELDS = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "attention_heads": ("num_attention_heads", "n_head"),
    "intermediate_size": ("intermediate_size", "ffn_hidden_size"),
    "vocab_size": ("vocab_size",),
    "max_context_tokens": ("max_position_embeddings", "n_positions", "seq_length"),
}


_QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe"})


def model_from_config(path: Path, input_name: str = "model") -> ModelSpec:
    """A ModelSpec from a Hugging Face checkpoint's config.json (a decoder-only transformer).

    Required: layers, hidden size, attention heads, intermediate size, vocabulary and context
    length. Optional, with the transformers library's own defaults: `num_key_value_heads`
    (= attention heads, no GQA), `head_dim` (= hidden size / heads), experts
    (`num_local_experts` or `num_experts`, with `num_experts_per_tok`; `moe_intermediate_size`
    as the expert width when given), `tie_word_embeddings` (false).
    """
    where = f"model config {path}"
    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, input_name)
        config = json.loads(text)
    except FileNotFoundError:
        problem = Problem(input_name, str(path), "is not a file (the checkpoint's config.json)")
        raise InputError(f"{problem}.", [problem]) from None
    except InputError:
        raise  # over the size bound: its own message
    except (OSError, ValueError) as e:
        problem = Problem(input_name, str(path), f"is not readable JSON ({e})")
        raise InputError(f"{problem}.", [problem]) from None
    if isinstance(config.get("text_config"), dict):  # multimodal checkpoints nest the language model
        config = {**config, **config["text_config"]}
    shape: dict[str, Any] = {}
    problems = []
    for ours, names in _REQUIRED_FIELDS.items():
        value = next((config[n] for n in names if n in config), None)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            problems.append(
                Problem(names[0], value, f"must be a positive whole number in {path} (needed for {ours})")
            )
        shape[ours] = value
    raise_if_invalid(where, problems)
    heads = shape["attention_heads"]
    experts = config.get("num_local_experts") or config.get("num_experts") or 1
    optional = {
        "kv_heads": config.get("num_key_value_heads") or heads,
        "head_dim": config.get("head_dim") or shape["hidden_size"] // heads,
        "experts": experts,
        "experts_per_token": config.get("num_experts_per_tok") or 1 if experts > 1 else 1,
        "tied_embeddings": bool(config.get("tie_word_embeddings", False)),
        # Qwen2's q/k/v projections always carry biases; its config.json does not say so.
        "attention_bias": bool(config.get("attention_bias", config.get("model_type") in _QKV_BIAS_TYPES)),
    }
    if experts > 1 and config.get("moe_intermediate_size"):
        shape["intermediate_size"] = config["moe_intermediate_size"]
    name = str(config.get("_name_or_path") or path.parent.name or path.stem)
    spec = ModelSpec(
        name=name,
        hf_id=name if "/" in name else "",
        source=str(path),
        notes=f"read from {path} (torch_dtype {config.get('torch_dtype', 'unset')})",
        **shape,
        **optional,
    )
    raise_if_invalid(where, validate_model_spec(spec))
    return spec


# Where a model that is not a preset goes: a stack file, ServedModel and model_spec take the path of
# its config.json as the name; only `size` has --model-config (it passes its own hint).
OTHER_MODELS = "(the path of a checkpoint's config.json, as the name, sizes any other model)"


def unknown_model_problem(name: str, input_name: str = "model", other_models: str = OTHER_MODELS) -> Problem:
    hits = close_matches(_key(name), preset_names(), limit=4)
    hint = f"did you mean {' or '.join(hits)}? " if hits else ""
    return Problem(
        input_name,
        name,
        f"is not a model preset; {hint}presets: {', '.join(preset_names())} {other_models}",
    )
