"""vllm_options: option strings, --no- pairs and fixed choices read with ast; several sources intersect."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

from inference_infra.components.serving.vllm_options import extract, git_sources, intersect, wheel_sources

# Small stand-ins shaped like vLLM's files (written for this test, not copied from vLLM).
CONFIG = """
from typing import Literal, Optional
Dtype = Literal["auto", "fp8"]
Size = Literal[8, 16]

class CacheConfig:
    cache_dtype: Dtype = "auto"
    block_size: SkipValidation[Size] = None
    prefix: Optional[bool] = None
    swap: float = 4
    mode: bool | str | None = None
"""
ARG_UTILS = """
def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    group = parser.add_argument_group()
    group.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
    group.add_argument("--block-size", **cache_kwargs["block_size"])
    group.add_argument("--enable-prefix", **{**cache_kwargs["prefix"], "default": None})
    group.add_argument("--swap-space", **cache_kwargs["swap"])
    group.add_argument("--mode", **cache_kwargs["mode"])
    group.add_argument("--device", choices=["auto", "neuron"])
    group.add_argument("--eager", action=argparse.BooleanOptionalAction)
"""
CLI_ARGS = """
class FrontendArgs:
    host: str | None = None
    disable_log: bool = False

def make_arg_parser(parser):
    parser.add_argument("--api-key", type=str)
"""


def _sources(cli_path: str = "vllm/entrypoints/openai/cli_args.py", config_path: str = "vllm/config.py"):
    return {"vllm/engine/arg_utils.py": ARG_UTILS, cli_path: CLI_ARGS, config_path: CONFIG}


def test_extract_reads_options_pairs_and_choices():
    table = extract(_sources())
    assert table["--kv-cache-dtype"] == (False, ("auto", "fp8"))  # through the module-level alias
    assert table["--block-size"] == (False, ("8", "16"))  # SkipValidation[alias]
    assert table["--enable-prefix"] == (True, None)  # Optional[bool]: --no-enable-prefix too
    assert table["--swap-space"] == (False, None)
    assert table["--mode"] == (False, None)  # bool | str: an optional value, not a --no- pair
    assert table["--device"] == (False, ("auto", "neuron"))  # literal choices=[...]
    assert table["--eager"] == (True, None)
    assert table["--host"] == (False, None)
    assert table["--disable-log"] == (True, None)
    assert table["--api-key"] == (False, None)


def test_extract_finds_the_frontend_and_config_where_later_versions_keep_them():
    later = extract(_sources("vllm/entrypoints/launchers/cli_args.py", "vllm/config/cache.py"))
    assert later == extract(_sources())


def test_intersect_keeps_what_every_source_accepts():
    older = {"--a": (True, None), "--b": (False, ("x", "y")), "--only-old": (False, None)}
    newer = {"--a": (False, None), "--b": (False, ("y", "z")), "--only-new": (False, None)}
    assert intersect([older, newer]) == {"--a": (False, None), "--b": (False, ("y",))}


def test_wheel_and_git_sources_read_the_same_files(tmp_path):
    wheel = tmp_path / "vllm-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in _sources().items():
            archive.writestr(name, text)
        archive.writestr("vllm/other.py", "x = 1")
    assert wheel_sources(str(wheel)) == _sources()
    repo = tmp_path / "fork"
    for name, text in _sources().items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fork"], check=True)
    assert git_sources(str(repo / ".git"), "HEAD") == _sources()


def test_cli_writes_a_table_with_its_sources_and_exactness(tmp_path):
    wheels = []
    for version, extra in (("1.0.0", ""), ("1.1.0", '\n    group.add_argument("--new", type=int)')):
        wheel = tmp_path / f"vllm-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            for name, text in _sources().items():
                archive.writestr(name, text + (extra if name.endswith("arg_utils.py") else ""))
        wheels.append(f"wheel:{wheel}")
    command = [sys.executable, "-m", "inference_infra.components.serving.vllm_options"]
    run = subprocess.run(
        [*command, "--family", "tpu-vllm", "--engine-version", "1.0.5", "--note", "bracketed", *wheels],
        check=True,
        capture_output=True,
        text=True,
    )
    document = json.loads(run.stdout)
    assert (document["family"], document["engine_version"], document["exact"]) == ("tpu-vllm", "1.0.5", False)
    assert len(document["sources"]) == 2
    options = {row["option"]: row for row in document["options"]}
    assert "--new" not in options  # only in the newer source
    assert options["--kv-cache-dtype"]["choices"] == ["auto", "fp8"]
    assert "choices" not in options["--swap-space"]
