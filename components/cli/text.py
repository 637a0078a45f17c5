"""Wrapping for terminal output that never splits a word: a key, a flag or a path stays whole.

textwrap's defaults break long words and break at hyphens, which cut
`inference-infra:awsGpuFleets[0]` and `--kv-quant` in two; here a line breaks
only at spaces, and a token longer than the width stands on its own line.
"""

from __future__ import annotations

import textwrap

WIDTH = 100


def wrap(text: str, width: int = WIDTH, **options: str) -> list[str]:
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False, **options)


def fill(text: str, width: int = WIDTH, **options: str) -> str:
    return "\n".join(wrap(text, width, **options))
