"""Hostile values through the GCP renderers: refused with a problem naming the input, or rendered safely.

A property test (hypothesis) feeds strings built to break out of a unit or a script (newlines, quotes,
`%`, `$`, `*`, spaces, `..`, heredoc delimiters, flags) into every input of a GPU fleet or TPU VM that
reaches the node: weights folders and bucket, pinned digests, served model names, the API key's secret,
image mirrors. Each value is either refused before any resource exists (a Problem naming the input:
exit 2 from `plan`) or rendered, and then the boot script passes `bash -n` and shellcheck and every unit
it writes passes `systemd-analyze verify`, and the value never stands in the script outside a blob.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.fleet_common import GcsWeights
from inference_infra.components.gcp.gpu_fleet import GpuFleetArgs, plan_gpu_fleet
from inference_infra.components.gcp.startup import UNIT_DIR, StartupConfig, render_startup_script
from inference_infra.components.gcp.tpu_vm import TpuVmArgs, plan_tpu_vm
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines
from tests.components.gcp.helpers import files_of, pin

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
HOSTILE = [
    "\nExecStartPre=/bin/sh -c 'touch /tmp/pwned'",
    "a\nENGINE_FILE\ntouch /tmp/pwned\n",
    "OPS_AGENT_CONFIG\nid",
    "llama --trust-remote-code",
    "x --middleware evil.Mw",
    "%n%i%%",
    "${PATH}",
    "$(touch /tmp/pwned)",
    "`id`",
    "*",
    "a/*",
    "..",
    "../../etc",
    "a/../b",
    "'",
    '"',
    "\\",
    "trailing\\",
    "a;b",
    "a|b",
    "a&b",
    "-rf",
    "a b",
    "tab\there",
    "\x00nul",
    "\u2028sep",
    "é",
]
ALPHABET = "abcXYZ09-_./ *?%$`'\"\\;|&<>(){}[]\n\t#=,:@!~^é"
hostile = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(alphabet=ALPHABET, min_size=1, max_size=24),
    st.builds(
        lambda a, b, c: a + b + c, st.sampled_from(["llama", "org/m"]), st.sampled_from(HOSTILE), st.just("")
    ),
)
CHECKS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def checked(script: str) -> None:
    """bash -n, shellcheck, and systemd-analyze verify of every unit the script writes."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "startup.sh"
        path.write_text(script)
        for command in (["bash", "-n", str(path)], ["shellcheck", "-s", "bash", str(path)]):
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            assert result.returncode == 0, (command[0], result.stdout, result.stderr)
        files = files_of(script)
        root = Path(scratch) / "root"
        shutil.copytree("/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
        for binary in (
            "/usr/bin/true",
            "/usr/bin/docker",
            "/usr/bin/grep",
            "/usr/bin/python3",
            "/usr/sbin/iptables",
        ):
            target = root / binary.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("#!/bin/sh\nexit 0\n")
            target.chmod(0o755)
        (root / "etc/systemd/system").mkdir(parents=True)
        (root / "etc/systemd/system/docker.service").write_text(
            "[Unit]\nDescription=stand-in\n[Service]\nType=oneshot\nExecStart=/usr/bin/true\n"
        )
        for file, text in files.items():
            target = root / file.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        units = [f for f in files if f.startswith(f"{UNIT_DIR}/") and f.endswith(".service")]
        instances = []
        for unit in units:
            if unit.endswith("@.service"):
                instance = unit.replace("@.service", "@0.service")
                (root / instance.lstrip("/")).symlink_to(Path(unit).name)
                instances.append(instance)
            else:
                instances.append(unit)
        if instances:
            result = subprocess.run(
                ["systemd-analyze", "verify", f"--root={root}", *instances],
                capture_output=True,
                text=True,
                check=False,
            )
            assert result.returncode == 0, result.stderr
            assert result.stderr == ""


def outside_blobs(script: str) -> str:
    """The script without its base64 blobs: what bash parses as code."""
    return "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("write_file 0"))


def gpu_args(**overrides: object) -> GpuFleetArgs:
    base: dict[str, object] = {
        "machine_type": "g2-standard-8",
        "zone": "us-central1-a",
        "subnetwork": SUBNET,
        "spot": 1,
        "model": ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
        "weights": GcsWeights(
            "models", ("gs://models/llama",), {"gs://models/llama": pin("gs://models/llama")}
        ),
    }
    return GpuFleetArgs(**{**base, **overrides})


def refused_or_rendered(problems: tuple, script_of, value: str, inputs: tuple[str, ...]) -> None:
    if problems:
        assert any(p.input.startswith(inputs) for p in problems), problems
        return
    script = script_of()
    checked(script)
    if len(value) > 3:
        assert value not in outside_blobs(script)


def test_checked_runs_every_tool_on_an_accepted_fleet():
    """The accepting branch of the properties: a fleet with allow-listed values renders and passes."""
    plan = plan_gpu_fleet("l4", gpu_args(api_key_secret="llm-key"), project="test-project")
    assert plan.problems == ()
    script = render_startup_script(plan.startup)
    assert (
        len([f for f in files_of(script) if f.endswith(".service")]) == 4
    )  # weights, engine, metrics, block
    checked(script)


@CHECKS
@given(folder=hostile)
def test_gpu_fleet_weights_folder_is_refused_or_rendered_safely(folder):
    uri = f"gs://models/{folder}"
    args = gpu_args(weights=GcsWeights("models", (uri,), {uri: pin(uri)}))
    plan = plan_gpu_fleet("l4", args, project="test-project")
    refused_or_rendered(plan.problems, lambda: render_startup_script(plan.startup), folder, ("weights",))


@CHECKS
@given(bucket=hostile)
def test_gpu_fleet_weights_bucket_is_refused_or_rendered_safely(bucket):
    uri = f"gs://{bucket}/llama"
    args = gpu_args(weights=GcsWeights(bucket, (uri,), {uri: pin(uri)}))
    plan = plan_gpu_fleet("l4", args, project="test-project")
    refused_or_rendered(plan.problems, lambda: render_startup_script(plan.startup), bucket, ("weights",))


@CHECKS
@given(digest=hostile)
def test_gpu_fleet_pinned_digest_is_refused_or_rendered_safely(digest):
    args = gpu_args(weights=GcsWeights("models", ("gs://models/llama",), {"gs://models/llama": digest}))
    plan = plan_gpu_fleet("l4", args, project="test-project")
    refused_or_rendered(plan.problems, lambda: render_startup_script(plan.startup), digest, ("weights",))


@CHECKS
@given(secret=hostile)
def test_gpu_fleet_api_key_secret_is_refused_or_rendered_safely(secret):
    plan = plan_gpu_fleet("l4", gpu_args(api_key_secret=secret), project="test-project")
    refused_or_rendered(
        plan.problems, lambda: render_startup_script(plan.startup), secret, ("api_key_secret",)
    )


@CHECKS
@given(name=hostile)
def test_gpu_fleet_served_model_name_is_refused_or_rendered_safely(name):
    args = gpu_args(model=ServedModel(name=name, context_tokens=4096, concurrency=8))
    plan = plan_gpu_fleet("l4", args, project="test-project")
    refused_or_rendered(plan.problems, lambda: render_startup_script(plan.startup), name, ("model",))


@CHECKS
@given(host=hostile, repository=hostile)
def test_tpu_vm_image_mirror_is_refused_or_rendered_safely(host, repository):
    uri = "gs://models/qwen"
    args = TpuVmArgs(
        zone="us-central1-a",
        subnetwork=SUBNET,
        accelerator_type="v5litepod-4",
        model=ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8),
        weights=GcsWeights("models", (uri,), {uri: pin(uri)}),
        image_mirrors={host: f"us-central1-docker.pkg.dev/acme-inference/{repository}"},
    )
    plan = plan_tpu_vm("t", args, project="test-project")
    refused_or_rendered(
        plan.problems, lambda: render_startup_script(plan.startup), repository, ("image_mirrors",)
    )


ENGINES = plan_engines(
    model="llama-3.1-8b",
    traffic=Traffic(context_tokens=4096, concurrency=8),
    precision=None,
    instance_type_name="g2-standard-8",
    cloud="gcp",
)


@CHECKS
@given(name=hostile)
def test_startup_renderer_refuses_or_quotes_a_served_name_given_as_engines(name):
    """A served name from a checkpoint's config.json reaches the renderer through EngineConfig."""
    from dataclasses import replace

    uri = "gs://models/llama"
    config = StartupConfig(
        model_uris=(uri,), manifest_sha256={uri: pin(uri)}, engines=replace(ENGINES, served_model_name=name)
    )
    try:
        script = render_startup_script(config)
    except (InputError, ValueError):
        return
    checked(script)
    # The name adds nothing to the code bash parses (it lives in the base64-written units): the script
    # outside its blobs holds the name exactly as often as one rendered with a plain name does (a name
    # like " || " occurs in any script; the old `len(name) <= 3` allowance let such names flake).
    plain = render_startup_script(replace(config, engines=replace(ENGINES, served_model_name="plain-name")))
    assert outside_blobs(script).count(name) == outside_blobs(plain).count(name)


@pytest.mark.parametrize("value", HOSTILE)
def test_startup_renderer_refuses_every_hostile_folder(value):
    uri = f"gs://models/{value}"
    with pytest.raises(InputError, match=r"model_uris\[0\]"):
        render_startup_script(StartupConfig(model_uris=(uri,), manifest_sha256={uri: pin(uri)}))
