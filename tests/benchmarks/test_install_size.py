"""benchmarks/install_size.py counts a virtualenv's size as `du -sm` does (the README quotes it)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "bench_install_size", ROOT / "benchmarks" / "install_size.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_install_size_counts_like_du_and_each_hard_link_once(tmp_path):
    folder = tmp_path / "venv"
    folder.mkdir()
    (folder / "a.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    os.link(folder / "a.bin", folder / "b.bin")  # pip's cache can hard-link: counted once, like du
    (folder / "small.txt").write_text("x")
    size = _module().size_mib(folder)
    assert size in (3, 4)  # 3 MiB of data plus the small file's block, rounded up
    if shutil.which("du"):
        assert size == int(
            subprocess.run(["du", "-sm", str(folder)], capture_output=True, text=True).stdout.split()[0]
        )


def test_install_size_measures_every_extra_by_default():
    assert _module().EXTRAS == ("", "aws", "gcp", "k8s", "all", "dev")
