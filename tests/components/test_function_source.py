"""A function's source archive: its layout, and a zip and a digest that change only with its content.

The layout is what the runtimes import (a Lambda handler `lambdas.idle_gpu_watchdog.handler.handler`,
a root `main.py` on GCP); the zip is laid out as Pulumi's engine lays out an archive of assets
(members sorted, a constant 1990-01-01 time: pulumi/pulumi sdk/go/common/resource/archive/archive.go,
`addNextFileToZIP`), so neither depends on when or where the files were checked out.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from inference_infra.components.function_source import ZIP_TIME, FunctionSource, digest, zip_bytes
from inference_infra.lambdas import idle_gpu_watchdog, spot_drain, watchdog_core

EXTRA = {"prices.json": b'{"version": 1}'}


def watchdog() -> FunctionSource:
    return FunctionSource.of(idle_gpu_watchdog, shared=(watchdog_core,))


def copy_of(tmp_path: Path) -> FunctionSource:
    """The watchdog's and the core's folders copied elsewhere, every file with another time."""
    lambdas = tmp_path / "lambdas"
    lambdas.mkdir()
    shutil.copy2(watchdog().directory.parent / "__init__.py", lambdas / "__init__.py")
    for package in ("idle_gpu_watchdog", "watchdog_core"):
        shutil.copytree(
            watchdog().directory.parent / package,
            lambdas / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    for path in lambdas.rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    return FunctionSource(lambdas / "idle_gpu_watchdog", (lambdas / "watchdog_core",))


def test_function_source_with_a_shared_package_ships_both_under_lambdas():
    source = watchdog()
    names = set(source.files(EXTRA))
    assert source.handler() == "lambdas.idle_gpu_watchdog.handler.handler"
    assert source.module == "lambdas.idle_gpu_watchdog"
    assert "lambdas/__init__.py" in names
    assert "lambdas/idle_gpu_watchdog/prices.json" in names
    assert {f"lambdas/watchdog_core/{p.name}" for p in source.shared[0].glob("*.py")} <= names
    assert {n.split("/")[1] for n in names if n.count("/") == 2} == {"idle_gpu_watchdog", "watchdog_core"}


def test_function_source_alone_keeps_its_package_at_the_root():
    source = FunctionSource.of(spot_drain)
    assert source.handler() == "spot_drain.handler.handler"
    assert {n.split("/")[0] for n in source.files()} == {"spot_drain"}


def test_function_source_rejects_a_shared_package_that_is_not_a_sibling(tmp_path):
    with pytest.raises(ValueError, match=r"shared packages .* are not beside it"):
        FunctionSource(watchdog().directory, (tmp_path / "elsewhere",))


def test_function_source_zip_is_the_same_for_the_same_content_anywhere_any_time(tmp_path):
    files = watchdog().files(EXTRA)
    elsewhere = copy_of(tmp_path).files(EXTRA)
    assert elsewhere == files
    assert zip_bytes(elsewhere) == zip_bytes(files)
    assert digest(elsewhere) == digest(files)
    members = zipfile.ZipFile(BytesIO(zip_bytes(files))).infolist()
    assert [m.filename for m in members] == sorted(files)
    assert {m.date_time for m in members} == {ZIP_TIME}


def test_function_source_zip_and_digest_change_with_one_byte_of_the_shared_core(tmp_path):
    source = copy_of(tmp_path)
    before = source.files(EXTRA)
    core_module = source.shared[0] / "decide.py"
    core_module.write_bytes(core_module.read_bytes() + b"\n")
    after = source.files(EXTRA)
    assert digest(after) != digest(before)
    assert zip_bytes(after) != zip_bytes(before)


def test_function_source_digest_changes_with_a_name_alone():
    files = {"lambdas/a.py": b"x"}
    assert digest(files) != digest({"lambdas/b.py": b"x"})
