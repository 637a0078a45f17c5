"""Bounded reads of the files a user hands the CLI or the plan: the size is checked before parsing.

A stack file, a trace or a manifest is parsed whole in memory (YAML, CSV, JSON), and parsing costs
many times the file's bytes: a 2 GiB trace or a stack file of a million `a:` lines would run the
machine out of memory, or for minutes, before any message could name the problem. Each reader here
first asks the file system for the size (`os.stat`) and refuses a file over its bound with an
`InputError` (CLI exit 2) naming the file, its size and the bound; then it reads at most the bound
plus one byte, so a file that grows between the two steps (a FIFO, a file being written) is refused
too. The bounds, and why each is what it is:

- `MAX_PROJECT_FILE_BYTES` (1 MiB): `Pulumi.yaml` and `Pulumi.<stack>.yaml`. The reference stacks'
  files are under 20 KiB (Pulumi.prod.yaml 15 KiB); a stack file also holds at most `MAX_ITEMS`
  entries per list or map.
- `MAX_CONFIG_FILE_BYTES` (1 MiB): `--policy-config`, `--usage-file`, `--model-config` (a Hugging Face
  `config.json` is a few KiB; a usage file has a line per priced resource).
- `MAX_MANIFEST_BYTES` (16 MiB): a weight manifest, about 150 bytes per file: 100,000 files.
- `MAX_TRACE_BYTES` (64 MiB): a `simulate --trace` CSV. The committed traces in benchmarks/data/ are
  0.3 to 0.7 MiB, 8,800 to 36,000 requests at 17-37 bytes a row (measured 2026-12-02); 64 MiB is
  about 90 times the largest, 2 to 4 million requests.
"""

from __future__ import annotations

import os
from pathlib import Path

from inference_infra.components.errors import InputError, Problem

MIB = 1024 * 1024
MAX_PROJECT_FILE_BYTES = 1 * MIB
MAX_CONFIG_FILE_BYTES = 1 * MIB
MAX_MANIFEST_BYTES = 16 * MIB
MAX_TRACE_BYTES = 64 * MIB


def _size(n: int) -> str:
    return f"{n:,} bytes ({n / MIB:.1f} MiB)" if n >= MIB else f"{n:,} bytes"


def too_large(path: str | Path, size: int, bound: int, what: str) -> InputError:
    """The one error for a file over its bound: names the file, its size and the bound."""
    problem = Problem(what, str(path), f"is {_size(size)}; at most {_size(bound)} is read")
    return InputError(
        f"{what} {str(path)!r} is {_size(size)}, larger than the {_size(bound)} this reads; it is refused "
        "before parsing (is it the file you meant?). The bounds are in docs/reference.md, Bounds.",
        [problem],
    )


def check_size(path: str | Path, bound: int, what: str) -> None:
    """Refuse a regular file larger than `bound` bytes (os.stat; nothing is read). OSError passes."""
    size = os.stat(path).st_size
    if size > bound:
        raise too_large(path, size, bound, what)


def read_bytes(path: str | Path, bound: int, what: str) -> bytes:
    """The file's bytes, or InputError when it is larger than `bound` (checked before reading it all)."""
    check_size(path, bound, what)
    with open(path, "rb") as f:
        data = f.read(bound + 1)
    if len(data) > bound:  # it grew, or it is not a regular file
        raise too_large(path, len(data), bound, what)
    return data


def read_text(path: str | Path, bound: int, what: str, encoding: str = "utf-8") -> str:
    """`read_bytes` decoded; UnicodeDecodeError passes to the caller, as `Path.read_text` raises it."""
    return read_bytes(path, bound, what).decode(encoding)
