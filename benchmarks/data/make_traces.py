"""Build the burst and diurnal traces from the Azure conv trace (seeded; the outputs are committed).

    .venv/bin/python benchmarks/data/make_traces.py     # rewrites the three committed traces
    .venv/bin/python benchmarks/data/make_traces.py --seed 7 --out day.csv   # one more diurnal day
    .venv/bin/python benchmarks/data/make_traces.py --half first --out first.csv   # conv's time split

Both are written at one tenth of the volume they stand for and replayed with `--scale 10` (each
request ten times at its own time, as the conv trace's own 10x runs are), which keeps the committed
files under 1 MB each:

- `conv_burst.csv`: the conv trace (one hour) with an instantaneous 2x step for 15 minutes: from
  minute 20 to minute 35 each request gets a second one within the second after it, whose prompt and
  output are drawn (seeded) from the requests of minutes 40 to 55 (the same service's mix, not
  copies). At `--scale 10`: 10x conv with a 20x quarter-hour.
- `conv_diurnal.csv`: three hours whose rate follows a smooth daily curve compressed into three hours,
  m(t) = 2 + 8 sin^2(pi t / 3 h) times the conv rate (2x at the ends, 10x at the middle): the conv
  trace cycled over its own length, each of its requests kept with probability m(t) / 10 (seeded
  thinning). At `--scale 10`: 2x to 10x conv and back.
- `conv_diurnal_day2.csv`: "another day" for `simulate --tune --validate`: the same recipe as
  `conv_diurnal.csv` with another seed (SEED_DAY2), so the same curve over the same conv requests,
  kept by other draws. A weak hold-out: the shape, the hour's request mix and most of the requests
  themselves are shared; only which requests arrive in each minute differs.
- `--half first|second` (not committed: conv's own rows): conv before and from 1,800 s, the time
  split the benchmark tunes and judges on (`simulate --trace first.csv --tune --validate second.csv`).

Timestamps are plain seconds from the first request (the traces carry no wall-clock time, so a
pool's working-hours schedule does not apply to them).
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

from inference_infra.components.simulate import read_trace

DATA = Path(__file__).resolve().parent
SEED = 20261202
SEED_DAY2 = 20261203  # conv_diurnal_day2.csv: the diurnal recipe's second day
HALF_S = 1800.0  # conv's time split (--half): tuned on the first half hour, judged on the second
HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


def burst(conv, rng):
    rows = [(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in conv.requests]
    later = [r for r in conv.requests if 2400 <= r.arrival_s < 3300]
    extra = []
    for r in conv.requests:
        if 1200 <= r.arrival_s < 2100:
            other = rng.choice(later)
            extra.append(
                (min(r.arrival_s + rng.random(), 2099.999), other.prompt_tokens, other.output_tokens)
            )
    return sorted(rows + extra)


def diurnal(conv, rng, hours=3.0):
    span = conv.duration_s
    length = hours * 3600
    rows = []
    cycle = 0
    while cycle * span < length:
        for r in conv.requests:
            t = cycle * span + r.arrival_s
            if t >= length:
                break
            rate = 2 + 8 * math.sin(math.pi * t / length) ** 2
            if rng.random() < rate / 10:
                rows.append((t, r.prompt_tokens, r.output_tokens))
        cycle += 1
    return rows


def write(path: Path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(HEADER)
        for t, p, o in rows:
            f.write(f"{t:.3f},{p},{o}\n")


def half(conv, which: str) -> list[tuple[float, int, int]]:
    """conv's first or second half hour (arrivals before or from HALF_S), as the benchmark splits it."""
    first = which == "first"
    return [
        (r.arrival_s, r.prompt_tokens, r.output_tokens)
        for r in conv.requests
        if (r.arrival_s < HALF_S) == first
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build the burst and diurnal traces from conv.")
    parser.add_argument("--seed", type=int, help="write one diurnal trace with this seed (with --out)")
    parser.add_argument(
        "--half", choices=("first", "second"), help="write conv's first or second half hour (with --out)"
    )
    parser.add_argument("--out", type=Path, help="where --seed's diurnal trace or --half's half goes")
    args = parser.parse_args(argv)
    if args.seed is not None and args.half is not None:
        parser.error("--seed writes a diurnal day, --half a half of conv: one at a time")
    if (args.seed is None and args.half is None) != (args.out is None):
        parser.error("--seed or --half goes with --out: the trace it builds, written there")
    conv = read_trace(DATA / "AzureLLMInferenceTrace_conv.csv")
    if args.seed is not None:
        write(args.out, diurnal(conv, random.Random(args.seed)))
        return
    if args.half is not None:
        write(args.out, half(conv, args.half))
        return
    write(DATA / "conv_burst.csv", burst(conv, random.Random(SEED)))
    write(DATA / "conv_diurnal.csv", diurnal(conv, random.Random(SEED)))
    write(DATA / "conv_diurnal_day2.csv", diurnal(conv, random.Random(SEED_DAY2)))


if __name__ == "__main__":
    main()
