"""Request traces: CSV rows of `TIMESTAMP,ContextTokens,GeneratedTokens`.

That is the schema of the public Azure LLM inference traces of 2023
(github.com/Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md: "TIMESTAMP | Invocation time",
"ContextTokens | Number of context tokens", "GeneratedTokens | Number of generated tokens"). Their
timestamps are wall-clock times with seven fractional digits and no zone
(`2023-11-16 18:15:46.6805900`, .NET's default format), which `datetime.strptime`'s `%f` (six digits
at most) cannot read; `parse_timestamp` reads up to nine. A zone suffix (`Z`, `+01:00`) is honoured;
a time without one is taken as UTC. A TIMESTAMP may also be plain seconds (`12.5`), which synthetic
traces use. Extra columns are ignored; rows need not be sorted (the replay orders them by time).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from inference_infra.components import input_size
from inference_infra.components.errors import InputError, Problem

COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?$"
)
_SECONDS = re.compile(r"^\d+(?:\.\d+)?$")


class TraceError(InputError):
    """A trace that cannot be read (CLI exit 2): names the file, the line and the value."""


@dataclass(frozen=True)
class Request:
    arrival_s: float  # seconds after the trace's first request
    prompt_tokens: int  # ContextTokens
    output_tokens: int  # GeneratedTokens


@dataclass(frozen=True)
class Trace:
    """Requests ordered by arrival; the first arrives at 0 s."""

    requests: tuple[Request, ...]
    start: datetime | None = None  # wall-clock time of the first request (None: plain-seconds trace)
    source: str = ""

    @property
    def duration_s(self) -> float:
        return self.requests[-1].arrival_s if self.requests else 0.0

    @classmethod
    def of(
        cls, requests: Iterable[tuple[float, int, int]], *, start: datetime | None = None, source: str = ""
    ) -> Trace:
        """A trace from (seconds, prompt tokens, output tokens) rows, shifted so the first is at 0."""
        rows = sorted(requests, key=lambda r: r[0])
        if not rows:
            raise TraceError(f"trace {source or '(rows)'} has no requests.")
        t0 = rows[0][0]
        return cls(tuple(Request(float(t - t0), int(p), int(o)) for t, p, o in rows), start, source)

    def scaled(self, copies: int) -> Trace:
        """Each request `copies` times at its own time: the same shape at `copies` times the volume."""
        if copies == 1:
            return self
        reqs = tuple(r for r in self.requests for _ in range(copies))
        return Trace(reqs, self.start, f"{self.source} x{copies}")

    def window(self, start_s: float, end_s: float) -> Trace:
        """The requests arriving in [start_s, end_s), re-based to 0 (for a one-hour slice of a day)."""
        kept = [r for r in self.requests if start_s <= r.arrival_s < end_s]
        if not kept:
            raise TraceError(f"trace {self.source} has no requests between {start_s:g} s and {end_s:g} s.")
        t0 = kept[0].arrival_s
        start = self.start + timedelta(seconds=t0) if self.start is not None else None
        return Trace(tuple(Request(r.arrival_s - t0, r.prompt_tokens, r.output_tokens) for r in kept), start)


def parse_timestamp(text: str) -> datetime | float:
    """A trace's TIMESTAMP: an aware datetime (UTC when no zone is given) or plain seconds.

    Raises ValueError when it is neither.
    """
    value = text.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    m = _TIME.fullmatch(value)
    if not m:
        raise ValueError(value)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction = m.group(7) or ""
    micro = round(int(fraction.ljust(9, "0")) / 1000) if fraction else 0
    zone = m.group(8)
    tz = UTC
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    # 999,999,500 ns rounds to a whole second: carry it
    carry, micro = divmod(micro, 1_000_000)
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz) + timedelta(seconds=carry)


def read_trace(path: str | Path) -> Trace:
    """Read a trace file; TraceError names the file and the line of the first bad row."""
    try:
        text = input_size.read_text(Path(path), input_size.MAX_TRACE_BYTES, "trace", encoding="utf-8-sig")
    except InputError as e:  # over the bound: refused before the CSV is parsed
        raise TraceError(str(e), e.problems) from None
    except OSError as e:
        raise TraceError(
            f"trace {str(path)!r} cannot be read ({e.strerror or e}); pass a CSV file with the columns "
            f"{','.join(COLUMNS)}.",
            [Problem("trace", str(path), "must be a readable CSV file")],
        ) from None
    except UnicodeDecodeError:
        raise TraceError(
            f"trace {str(path)!r} is not UTF-8 text; pass a CSV file with the columns {','.join(COLUMNS)}.",
            [Problem("trace", str(path), "must be UTF-8 CSV")],
        ) from None
    return parse_trace(io.StringIO(text, newline=""), source=str(path))


def parse_trace(lines: Iterable[str], *, source: str = "trace") -> Trace:
    """Parse CSV text (an iterable of lines, the header first)."""
    rows = csv.reader(lines)
    header = next(rows, None)
    where = repr(source)
    if header is None:
        raise TraceError(f"trace {where} is empty; it needs a header line {','.join(COLUMNS)} and rows.")
    index = _columns(header, where)
    parsed: list[tuple[float | datetime, int, int]] = []
    kinds: set[type] = set()
    for number, row in enumerate(rows, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) <= max(index):
            raise _bad(
                where, number, "the row", ",".join(row), f"has {len(row)} columns, needs {len(COLUMNS)}"
            )
        cells = [row[i].strip() for i in index]
        try:
            when = parse_timestamp(cells[0])
        except ValueError:
            raise _bad(
                where,
                number,
                "TIMESTAMP",
                cells[0],
                "is not a time (YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM]) or a number of seconds",
            ) from None
        kinds.add(type(when))
        if len(kinds) > 1:
            raise _bad(where, number, "TIMESTAMP", cells[0], "mixes plain seconds with dates in one trace")
        prompt = _count(where, number, "ContextTokens", cells[1], least=1)
        output = _count(where, number, "GeneratedTokens", cells[2], least=1)
        parsed.append((when, prompt, output))
    if not parsed:
        raise TraceError(f"trace {where} has a header but no requests.")
    first = min(r[0] for r in parsed)  # type: ignore[type-var]
    if isinstance(first, datetime):
        rows_s = [((r[0] - first).total_seconds(), r[1], r[2]) for r in parsed]  # type: ignore[operator]
        return Trace.of(rows_s, start=first.astimezone(UTC), source=source)
    return Trace.of([(float(r[0]), r[1], r[2]) for r in parsed], source=source)  # type: ignore[arg-type]


def _columns(header: Sequence[str], where: str) -> list[int]:
    names = [h.strip().lstrip("\ufeff") for h in header]
    lowered = [n.lower() for n in names]
    index = []
    for column in COLUMNS:
        if column.lower() not in lowered:
            raise TraceError(
                f"trace {where} line 1: the header {','.join(names)!r} has no {column} column; a trace has "
                f"the columns {','.join(COLUMNS)} (the Azure LLM inference trace format).",
                [Problem("trace line 1", ",".join(names), f"must name the columns {','.join(COLUMNS)}")],
            )
        index.append(lowered.index(column.lower()))
    return index


def _count(where: str, line: int, column: str, text: str, *, least: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < least:
        raise _bad(where, line, column, text, f"must be a whole number of at least {least}")
    return int(value)


def _bad(where: str, line: int, column: str, value: str, allowed: str) -> TraceError:
    return TraceError(
        f"trace {where} line {line}: {column} {value!r} {allowed}.",
        [Problem(f"trace line {line}: {column}", value, allowed)],
    )
