"""The Cloud Run function's source archive the stack uploads, unpacked into an empty folder and run
from there alone.

The archive is taken from what IdleGpuWatchdog hands the engine (the BucketObject's `source` under
Pulumi's mock runtime), zipped as the engine zips it and extracted. A fresh interpreter with only
that folder of ours loads it with functions-framework, as the Python runtime does: `main.py` from
the root, with the root appended to sys.path, and the build's entry point `handler` taken from it
(functions-framework-python 3.10.2, `_function_registry.load_function_module`). A request then runs
a whole watchdog run against the loopback fake of Google's APIs (fake_gcp.py). The only change the
probe makes is to point `make_clients` at the fake with anonymous credentials.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from inference_infra.components.function_source import digest
from inference_infra.components.gcp import IdleGpuWatchdog, IdleGpuWatchdogArgs
from inference_infra.components.gcp.idle_watchdog import ENTRY_POINT, PACKAGE

P = "acme-inference-prod"
ZONE = "us-central1-a"
TOPIC = f"projects/{P}/topics/watchdog"
SOURCE = "gcp:storage/bucketObject:BucketObject"
FUNCTION = "gcp:cloudfunctionsv2/function:Function"

PROBE = """
import os, sys
from functions_framework import create_app

root, url = sys.argv[1], sys.argv[2]
app = create_app(target=os.environ["FUNCTION_TARGET"], source=os.path.join(root, "main.py"))

from google.auth.credentials import AnonymousCredentials
entry = sys.modules["lambdas.gcp_idle_watchdog.handler"]
real = entry.make_clients
entry.make_clients = lambda settings: real(
    settings, endpoint=url, credentials=AnonymousCredentials(),
    retry=entry.default_retry(initial=0.01, maximum=0.05, timeout=10),
)
response = app.test_client().post("/", json={})
OUT = {
    "status": response.status_code,
    "result": response.get_json(silent=True),
    "text": response.get_data(as_text=True)[-2000:],
}
"""


def vm_key(name: str) -> str:
    return f"projects/{P}/zones/{ZONE}/instances/{name}"


@pytest.fixture
def source(plan_of) -> dict:
    capture = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs()))
    assert capture.one(FUNCTION).props["buildConfig"]["entryPoint"] == ENTRY_POINT
    return capture.one(SOURCE).props


def environment(tmp_path: Path) -> dict[str, str]:
    # FUNCTION_TARGET is functions-framework's own name for the entry point (set by Cloud Run's build)
    return {"HOME": str(tmp_path), "FUNCTION_TARGET": ENTRY_POINT, "PROJECTS": P, "PUBSUB_TOPIC": TOPIC}


def seed(fake, fake_gcp) -> None:
    """An idle and a busy GPU VM with samples around the real clock, which the handler reads."""
    now = datetime.now(UTC)
    for name, percent in (("idle", 1.0), ("busy", 70.0)):
        vm = fake.add_vm(P, ZONE, name)
        fake.add_gpu_series(
            P, vm, 0, fake_gcp.samples(now - timedelta(hours=3), now + timedelta(minutes=10), percent)
        )


def test_gcp_watchdog_archive_is_named_after_its_content(source, archive_files):
    files = archive_files(source["source"]["assets"])
    assert source["name"] == f"{PACKAGE}-{digest(files)[:16]}.zip"
    assert {"main.py", "requirements.txt", "lambdas/__init__.py", f"lambdas/{PACKAGE}/prices.json"} <= set(
        files
    )
    assert {n.split("/")[1] for n in files if n.count("/") == 2} == {PACKAGE, "watchdog_core"}


def test_gcp_watchdog_archive_runs_alone_under_functions_framework(
    source, archive_files, unpack, alone, fake, fake_gcp, tmp_path
):
    seed(fake, fake_gcp)
    root = unpack(archive_files(source["source"]["assets"]))

    report = alone(root, PROBE, environment(tmp_path), fake.url)

    out = report["out"]
    assert out["status"] == 200, out["text"]
    assert out["result"]["stopped"] == [vm_key("idle")]
    assert out["result"]["skipped"]["busy"] == [vm_key("busy")]
    assert out["result"]["estimated_hourly_saving_usd"] > 0  # prices.json shipped beside the function
    assert fake.stopped == [vm_key("idle")]
    assert len(fake.published) == 1
    loaded = report["modules"]
    assert loaded["lambdas.watchdog_core.loop"] == str(root / "lambdas" / "watchdog_core" / "loop.py")
    assert loaded[f"lambdas.{PACKAGE}.handler"] == str(root / "lambdas" / PACKAGE / "handler.py")


def test_gcp_watchdog_archive_without_the_shared_core_fails_to_load(
    source, archive_files, unpack, alone, fake, tmp_path
):
    files = archive_files(source["source"]["assets"])
    root = unpack(
        {name: content for name, content in files.items() if not name.endswith("watchdog_core/loop.py")}
    )
    with pytest.raises(AssertionError, match=r"cannot import name 'loop' from 'lambdas\.watchdog_core'"):
        alone(root, PROBE, environment(tmp_path), fake.url)
