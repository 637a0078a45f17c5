"""Every file a user hands the CLI or the plan is refused (exit 2, one paragraph naming the file, its
size and the bound) when it is larger than its bound, before it is parsed; a file at the bound is read.

The over-bound files are sparse (os.truncate), or `a:` lines for the YAML ones: a parser given them
would take seconds or fail on their content, so an exit 2 that names the bound within a second shows
the size was checked first."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from inference_infra.components import input_size
from inference_infra.components.cli import main
from inference_infra.components.errors import ConfigError, InputError
from inference_infra.components.models import verify_weights
from inference_infra.components.offline_plan.policy_pack import read_config_file
from inference_infra.components.offline_plan.project import load_project, load_stack
from inference_infra.components.planner.models import model_from_config
from inference_infra.components.pricing.usage import read_usage_file
from inference_infra.components.simulate import read_trace
from inference_infra.infra.stack_file import parse_stack_settings

MIB = 1024 * 1024
SIMULATE_FLAGS = [
    "--model", "llama-3.1-8b", "--machine", "g6e.xlarge", "--context", "8192", "--concurrency", "16",
    "--peak", "8",
]  # fmt: skip
MODEL_CONFIG = {
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
}


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def a_lines(path: Path, size: int) -> Path:
    """`size` bytes of `a:` lines: YAML a parser would read for a long time (or refuse as duplicates)."""
    path.write_bytes((b"a:\n" * (size // 3 + 1))[:size])
    return path


def padded(path: Path, text: str, size: int, pad: str = " ") -> Path:
    """`text` followed by padding to exactly `size` bytes (spaces, or a YAML comment)."""
    data = text.encode()
    path.write_bytes(data + pad.encode() * (size - len(data)))
    assert path.stat().st_size == size
    return path


def refused(capsys, argv: list[str], name: str, size: int, bound: int) -> None:
    start = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - start
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert err.startswith("inference-infra: ")
    assert "Traceback" not in err
    assert name in err
    assert f"{size:,} bytes" in err
    assert f"{bound:,} bytes" in err
    assert elapsed < 5, f"{elapsed:.1f} s: the file was read before its size was checked"


# The helper


def test_the_bounds_are_the_documented_ones():
    assert input_size.MAX_PROJECT_FILE_BYTES == 1 * MIB
    assert input_size.MAX_CONFIG_FILE_BYTES == 1 * MIB
    assert input_size.MAX_MANIFEST_BYTES == 16 * MIB
    assert input_size.MAX_TRACE_BYTES == 64 * MIB
    largest_trace = max(p.stat().st_size for p in Path("benchmarks/data").glob("*.csv"))
    assert 50 * largest_trace <= input_size.MAX_TRACE_BYTES


def test_a_file_at_the_bound_is_read_and_one_byte_more_is_refused(tmp_path):
    at = padded(tmp_path / "at", "x", 1000)
    assert input_size.read_bytes(at, 1000, "thing") == b"x" + b" " * 999
    over = padded(tmp_path / "over", "x", 1001)
    with pytest.raises(InputError, match=r"thing '.*over' is 1,001 bytes, larger than the 1,000 bytes"):
        input_size.read_bytes(over, 1000, "thing")


def test_a_file_that_is_not_regular_is_read_only_to_its_bound(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer: more than the bound, then gone
        try:
            with open(fifo, "wb") as f:
                f.write(b"a:\n" * 1000)
        finally:
            os._exit(0)
    try:
        with pytest.raises(InputError, match="larger than the 100 bytes"):
            input_size.read_bytes(fifo, 100, "fifo")
    finally:
        os.waitpid(pid, 0)


def test_a_missing_file_is_the_callers_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        input_size.read_bytes(tmp_path / "none", 10, "thing")


# Project and stack files (the offline plan reads them)


def test_a_stack_file_over_its_bound_is_refused_before_it_is_parsed(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("")
    bound = input_size.MAX_PROJECT_FILE_BYTES
    a_lines(tmp_path / "Pulumi.dev.yaml", bound + 1)
    refused(capsys, ["plan", "--stack", "dev", "--cwd", str(tmp_path)], "Pulumi.dev.yaml", bound + 1, bound)
    a_lines(tmp_path / "Pulumi.dev.yaml", 2 * MIB)
    refused(capsys, ["plan", "--stack", "dev", "--cwd", str(tmp_path)], "Pulumi.dev.yaml", 2 * MIB, bound)


def test_a_project_file_over_its_bound_is_refused_before_it_is_parsed(tmp_path, capsys):
    bound = input_size.MAX_PROJECT_FILE_BYTES
    a_lines(tmp_path / "Pulumi.yaml", bound + 1)
    refused(capsys, ["plan", "--stack", "dev", "--cwd", str(tmp_path)], "Pulumi.yaml", bound + 1, bound)


def test_project_and_stack_files_at_their_bound_are_read(tmp_path):
    bound = input_size.MAX_PROJECT_FILE_BYTES
    (tmp_path / "__main__.py").write_text("")
    padded(tmp_path / "Pulumi.yaml", "name: p\nruntime: python\n#", bound, pad="x")
    padded(tmp_path / "Pulumi.dev.yaml", "config:\n  aws:region: us-east-1\n#", bound, pad="x")
    project = load_project(tmp_path)
    assert project.name == "p"
    assert load_stack(project, "dev").values["aws:region"] == "us-east-1"


def test_stack_values_over_the_stack_files_bound_are_refused_before_they_are_decoded():
    """Under `pulumi up` the engine read the file; the program still refuses to decode megabytes."""
    big = "[" + ",".join(['"10.0.0.0/8"'] * 100_000) + "]"
    assert len(big) > input_size.MAX_PROJECT_FILE_BYTES
    with pytest.raises(ConfigError, match=r"Pulumi\.dev\.yaml.*must be at most 1,048,576 bytes together"):
        parse_stack_settings({"allowedCidrs": big}, stack="dev")


# --policy-config, --usage-file, --model-config


def test_a_policy_config_over_its_bound_is_refused_before_the_plan_runs(tmp_path, capsys):
    bound = input_size.MAX_CONFIG_FILE_BYTES
    config = sparse(tmp_path / "dev.json", bound + 1)
    argv = ["plan", "--stack", "dev", "--cwd", str(Path.cwd()), "--policy-config", str(config)]
    refused(capsys, argv, "--policy-config", bound + 1, bound)
    with pytest.raises(InputError, match=r"policy config .* larger than"):
        read_config_file(config)


def test_a_policy_config_at_its_bound_is_read(tmp_path):
    config = padded(
        tmp_path / "dev.json",
        '{"a-policy": {"enforcementLevel": "advisory"}}',
        input_size.MAX_CONFIG_FILE_BYTES,
    )
    assert read_config_file(config)["a-policy"][0] == "advisory"


def test_a_usage_file_over_its_bound_is_refused(tmp_path, capsys):
    bound = input_size.MAX_CONFIG_FILE_BYTES
    usage = a_lines(tmp_path / "usage.yaml", bound + 1)
    argv = ["plan", "--stack", "dev", "--cwd", str(Path.cwd()), "--usage-file", str(usage)]
    refused(capsys, argv, "--usage-file", bound + 1, bound)


def test_a_usage_file_at_its_bound_is_read(tmp_path):
    usage = padded(
        tmp_path / "usage.yaml", "resource_usage:\n  x: {}\n#", input_size.MAX_CONFIG_FILE_BYTES, "x"
    )
    assert dict(read_usage_file(usage)) == {"x": {}}


def test_a_model_config_over_its_bound_is_refused(tmp_path, capsys):
    bound = input_size.MAX_CONFIG_FILE_BYTES
    config = sparse(tmp_path / "config.json", bound + 1)
    refused(
        capsys,
        ["size", "--model-config", str(config), "--context", "8192", "--concurrency", "8"],
        "--model-config",
        bound + 1,
        bound,
    )


def test_a_model_config_at_its_bound_is_read(tmp_path):
    config = padded(tmp_path / "config.json", json.dumps(MODEL_CONFIG), input_size.MAX_CONFIG_FILE_BYTES)
    assert model_from_config(config, "--model-config").layers == 32


# simulate --trace


def test_a_trace_over_its_bound_is_refused_before_it_is_parsed(tmp_path, capsys):
    bound = input_size.MAX_TRACE_BYTES
    trace = sparse(tmp_path / "trace.csv", bound + 1)
    refused(capsys, ["simulate", "--trace", str(trace), *SIMULATE_FLAGS], "trace", bound + 1, bound)


def test_a_trace_at_its_bound_is_read(tmp_path, monkeypatch):
    trace = tmp_path / "trace.csv"
    trace.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0.000,374,44\n4.315,396,109\n")
    monkeypatch.setattr(input_size, "MAX_TRACE_BYTES", trace.stat().st_size)
    assert len(read_trace(trace).requests) == 2
    monkeypatch.setattr(input_size, "MAX_TRACE_BYTES", trace.stat().st_size - 1)
    with pytest.raises(InputError, match="larger than"):
        read_trace(trace)


# Weight manifests


def test_a_manifest_over_its_bound_is_refused_by_models_verify(tmp_path, capsys):
    bound = input_size.MAX_MANIFEST_BYTES
    weights = tmp_path / "weights"
    weights.mkdir()
    manifest = sparse(tmp_path / "manifest.json", bound + 1)
    argv = ["models", "verify", str(weights), "--manifest", str(manifest)]
    refused(capsys, argv, "--manifest", bound + 1, bound)
    sparse(weights / verify_weights.MANIFEST_NAME, bound + 1)  # the default manifest too
    refused(capsys, ["models", "verify", str(weights)], "--manifest", bound + 1, bound)


def test_a_manifest_at_its_bound_is_verified(tmp_path, capsys, monkeypatch):
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"w" * 100)
    assert main(["models", "manifest", str(weights), "--write"]) == 0
    size = (weights / verify_weights.MANIFEST_NAME).stat().st_size
    monkeypatch.setattr(input_size, "MAX_MANIFEST_BYTES", size)
    assert main(["models", "verify", str(weights)]) == 0
    monkeypatch.setattr(input_size, "MAX_MANIFEST_BYTES", size - 1)
    assert main(["models", "verify", str(weights)]) == 2
    assert main(["models", "manifest", str(weights), "--write"]) == 2  # the manifest already there
    capsys.readouterr()
