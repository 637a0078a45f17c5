from __future__ import annotations

import collections
import hashlib
import importlib.util
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from inference_infra.components.simulate import TraceError, parse_trace, read_trace
from inference_infra.components.simulate.trace import parse_timestamp

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"


def test_parse_timestamp_reads_the_azure_seven_digit_fraction():
    # .NET's default format: seven fractional digits, no zone (taken as UTC)
    assert parse_timestamp("2023-11-16 18:15:46.6805900") == datetime(
        2023, 11, 16, 18, 15, 46, 680590, tzinfo=UTC
    )


def test_parse_timestamp_honours_a_zone_and_plain_seconds():
    assert parse_timestamp("2023-11-16T19:15:46+01:00") == datetime(2023, 11, 16, 18, 15, 46, tzinfo=UTC)
    assert parse_timestamp("2023-11-16 18:15:46Z") == datetime(2023, 11, 16, 18, 15, 46, tzinfo=UTC)
    assert parse_timestamp("12.5") == 12.5


def test_parse_timestamp_carries_a_fraction_that_rounds_to_a_second():
    assert parse_timestamp("2023-11-16 18:15:46.9999999") == datetime(2023, 11, 16, 18, 15, 47, tzinfo=UTC)


def test_parse_trace_sorts_rows_and_starts_at_zero():
    trace = parse_trace(
        [
            "TIMESTAMP,ContextTokens,GeneratedTokens",
            "2023-11-16 18:15:50.0000000,396,109",
            "2023-11-16 18:15:46.5000000,374,44",
        ]
    )
    assert [(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in trace.requests] == [
        (0.0, 374, 44),
        (3.5, 396, 109),
    ]
    assert trace.start == datetime(2023, 11, 16, 18, 15, 46, 500000, tzinfo=UTC)


def test_parse_trace_ignores_extra_columns_and_blank_lines():
    trace = parse_trace(["ContextTokens,TIMESTAMP,GeneratedTokens,Model", "10,0,5,x", "", "20,1.5,6,y"])
    assert [(r.arrival_s, r.prompt_tokens) for r in trace.requests] == [(0.0, 10), (1.5, 20)]
    assert trace.start is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("yesterday,10,5", "line 3: TIMESTAMP 'yesterday' is not a time"),
        ("1.0,ten,5", "line 3: ContextTokens 'ten' must be a whole number of at least 1"),
        ("1.0,10,0", "line 3: GeneratedTokens '0' must be a whole number of at least 1"),
        ("1.0,10.5,3", "line 3: ContextTokens '10.5' must be a whole number"),
        ("1.0,10", "line 3: the row '1.0,10' has 2 columns, needs 3"),
        ("2023-11-16 18:15:46,10,5", "line 3: TIMESTAMP '2023-11-16 18:15:46' mixes plain seconds"),
    ],
)
def test_parse_trace_rejects_a_bad_row_naming_its_line(row, message):
    with pytest.raises(TraceError, match=message):
        parse_trace(["TIMESTAMP,ContextTokens,GeneratedTokens", "0,10,5", row], source="t.csv")


def test_parse_trace_rejects_a_header_without_the_columns():
    with pytest.raises(TraceError, match="line 1: the header 'time,prompt,output' has no TIMESTAMP column"):
        parse_trace(["time,prompt,output", "0,1,1"])


def test_parse_trace_rejects_an_empty_trace():
    with pytest.raises(TraceError, match="is empty"):
        parse_trace([])
    with pytest.raises(TraceError, match="has a header but no requests"):
        parse_trace(["TIMESTAMP,ContextTokens,GeneratedTokens"])


def test_read_trace_rejects_a_missing_file(tmp_path):
    with pytest.raises(TraceError, match="cannot be read"):
        read_trace(tmp_path / "nope.csv")


@pytest.mark.parametrize(
    ("name", "rows", "sha256"),
    [
        ("conv", 19366, "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8"),
        ("code", 8819, "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6"),
    ],
)
def test_read_trace_reads_the_committed_azure_traces(name, rows, sha256):
    path = DATA / f"AzureLLMInferenceTrace_{name}.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256  # benchmarks/data/README.md
    trace = read_trace(path)
    assert len(trace.requests) == rows
    assert trace.start is not None
    assert trace.start.date().isoformat() == "2023-11-16"
    assert 3400 < trace.duration_s < 3600  # about an hour


def _recipe():
    spec = importlib.util.spec_from_file_location("make_traces", DATA / "make_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "rows", "sha256"),
    [
        ("conv_burst", 25718, "ac84e85834c93e2671ed4f64143cd96afe698250abc91f20f4c7db9feddaf2b9"),
        ("conv_diurnal", 35924, "99001884d8e40cce051024597906808904a25379273c2a9c586a9cc780c23ce6"),
    ],
)
def test_read_trace_reads_the_built_traces_and_their_recipe_rebuilds_them(name, rows, sha256, tmp_path):
    path = DATA / f"{name}.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256  # benchmarks/data/README.md
    assert len(read_trace(path).requests) == rows
    recipe = _recipe()
    conv = read_trace(DATA / "AzureLLMInferenceTrace_conv.csv")
    rng = random.Random(recipe.SEED)
    built = recipe.burst(conv, rng) if name == "conv_burst" else recipe.diurnal(conv, rng)
    recipe.write(tmp_path / "rebuilt.csv", built)
    assert hashlib.sha256((tmp_path / "rebuilt.csv").read_bytes()).hexdigest() == sha256


def test_built_traces_have_the_shapes_they_promise():
    per_minute = collections.Counter(
        int(r.arrival_s // 60) for r in read_trace(DATA / "conv_burst.csv").requests
    )
    conv = collections.Counter(
        int(r.arrival_s // 60) for r in read_trace(DATA / "AzureLLMInferenceTrace_conv.csv").requests
    )
    step = sum(per_minute[m] for m in range(20, 35)) / sum(conv[m] for m in range(20, 35))
    assert step == 2.0  # a 2x step for 15 minutes
    assert all(per_minute[m] == conv[m] for m in (*range(0, 20), *range(35, 58)))
    diurnal = read_trace(DATA / "conv_diurnal.csv")
    assert 3 * 3600 - 60 < diurnal.duration_s < 3 * 3600
    hours = collections.Counter(int(r.arrival_s // 600) for r in diurnal.requests)
    # 2x at the ends, 10x in the middle: the middle ten minutes carry about five times the first ten
    assert 4 < hours[8] / hours[0] < 8
