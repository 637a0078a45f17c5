"""Errors that name the user's line: clean stderr, locations outside installed code, close matches,
and cloud sources in `models manifest` as bad input (exit 2, no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from inference_infra.components.catalog import CatalogError
from inference_infra.components.cli import main
from inference_infra.components.offline_plan import ProgramError, plan
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines

ROOT = Path(__file__).resolve().parents[3]

# Registers resources from Pulumi's worker threads (each gets an event loop), then fails on bad input.
FAILS_AFTER_REGISTERING = """
import pulumi
import pulumi_aws as aws

from inference_infra.components.errors import InputError

for i in range(8):
    aws.s3.Bucket(f"bucket-{i}")
aws.ec2.SecurityGroup("sg", vpc_id="vpc-0123456789abcdef0")
raise InputError("replicas -1 must be at least 1")
"""


@pytest.mark.slow
def test_cli_stderr_holds_only_the_error_over_repeated_runs(pulumi_project):
    folder = pulumi_project(FAILS_AFTER_REGISTERING)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI", "INFERENCE_INFRA"))}
    for _ in range(10):
        run = subprocess.run(
            [sys.executable, "-m", "inference_infra.components.cli", "plan", "--cwd", str(folder)],
            capture_output=True, text=True, timeout=300, env=env, check=False,
        )  # fmt: skip
        assert run.returncode == 2
        # only the error: no "Exception ignored in BaseEventLoop.__del__" after it
        assert (
            run.stderr == f"inference-infra: {folder.name}/__main__.py:10: replicas -1 must be at least 1\n"
        )


VENV_LIBRARY = """
from inference_infra.components.errors import InputError


def check(replicas):
    if replicas < 1:
        raise InputError(f"replicas {replicas} must be at least 1")
"""


def test_plan_error_location_skips_a_virtualenv_inside_the_project(pulumi_project):
    program = """
    import sys
    sys.path.insert(0, "venv/lib/python3.11/site-packages")
    import fakelib

    fakelib.check(-1)
    """
    folder = pulumi_project(program)
    site = folder / "venv" / "lib" / "python3.11" / "site-packages" / "fakelib"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(VENV_LIBRARY)
    (folder / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    with pytest.raises(ProgramError) as raised:
        plan(folder, "dev")
    assert str(raised.value) == f"{folder.name}/__main__.py:6: replicas -1 must be at least 1"


def test_plan_error_location_is_a_path_test_not_a_string_prefix(pulumi_project, tmp_path):
    """A sibling folder whose name starts like the program's (infra2/ beside infra/) is not the program."""
    folder = pulumi_project(
        "import sys\nsys.path.insert(0, '../infra2')\nimport helper\nhelper.check(-1)\n", main="infra"
    )
    (folder / "infra2").mkdir()
    (folder / "infra2" / "helper.py").write_text(VENV_LIBRARY)
    with pytest.raises(ProgramError, match=r"^infra/__main__\.py:4: replicas -1"):
        plan(folder, "dev")


def test_plan_engines_rejects_an_instance_type_typo_with_close_matches():
    with pytest.raises(CatalogError, match=r"'g6\.xlarg'; close matches: g6\.xlarge"):
        plan_engines(
            model="llama-3.1-8b",
            traffic=Traffic(context_tokens=4096, concurrency=4),
            precision=None,
            instance_type_name="g6.xlarg",
            cloud="aws",
        )


def test_plan_engines_rejects_a_model_typo_with_close_matches():
    with pytest.raises(ValueError, match=r"did you mean llama-3\.1-8b"):
        plan_engines(
            model="llama-3.1-8bb",
            traffic=Traffic(context_tokens=4096, concurrency=4),
            precision=None,
            instance_type_name="g6.xlarge",
            cloud="aws",
        )


def test_plan_rejects_a_stack_typo_with_close_matches(capsys):
    assert main(["plan", "--cwd", str(ROOT), "--stack", "prd"]) == 2
    assert "did you mean 'prod'" in " ".join(capsys.readouterr().err.split())


def _manifest(capsys, source: str) -> tuple[int, str]:
    code = main(["models", "manifest", source])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, " ".join(err.split())


@pytest.fixture
def no_aws_credentials(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    # boto3's default session keeps the credentials it resolved for an earlier test in this worker
    # (with -n 2 the order varies): start from none, so the lookup sees the empty environment above.
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


def test_models_manifest_rejects_s3_without_credentials(capsys, no_aws_credentials):
    code, err = _manifest(capsys, "s3://models/llama/")
    assert code == 2
    assert err.startswith("inference-infra: models manifest: cannot read SOURCE 's3://models/llama/': Unable")
    assert "configure AWS credentials" in err


def test_models_manifest_rejects_a_missing_bucket(capsys, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="other")
        code, err = _manifest(capsys, "s3://no-such-bucket/llama/")
    assert code == 2
    source = "'s3://no-such-bucket/llama/'"
    assert err == f"inference-infra: models manifest: cannot read SOURCE {source}: the bucket does not exist"


@pytest.fixture
def moto_server(no_aws_credentials, monkeypatch):
    """A moto S3 server on loopback (real HTTP, as a bucket in the wrong account answers), with fake
    credentials; yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)  # botocore's endpoint setting, read by every client
    yield endpoint
    server.stop()


def test_models_manifest_rejects_a_missing_bucket_on_a_server(moto_server):
    boto3.client("s3").create_bucket(Bucket="other")
    run = subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", "models", "manifest", "s3://no-such-bucket/m/"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert "\n\n" not in run.stderr  # one paragraph (wrapped like every CLI error), no traceback
    assert " ".join(run.stderr.split()) == (
        "inference-infra: models manifest: cannot read SOURCE 's3://no-such-bucket/m/': the bucket does not "
        "exist"
    )


def test_models_manifest_rejects_s3_without_credentials_in_one_paragraph(no_aws_credentials):
    run = subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", "models", "manifest", "s3://models/m/"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.startswith("inference-infra: models manifest: cannot read SOURCE 's3://models/m/'")
    assert "\n\n" not in run.stderr
    assert "Traceback" not in run.stderr


def test_models_manifest_rejects_gs_without_the_client_library(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.cloud.storage", None)  # import fails as when not installed
    code, err = _manifest(capsys, "gs://models/llama/")
    assert code == 2
    assert "needs the google-cloud-storage package" in err
    assert "-m pip install 'google-cloud-storage'" in err


def test_cli_version_names_the_distribution(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "inference-infra 0.1.0\n"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["plan", "--stack", "../../etc/passwd"], "--stack '../../etc/passwd' is not a stack name"),
        (["plan", "--stack", ".."], "--stack '..' is not a stack name"),
        (["models", "verify", "/nonexistent-weights"], "DIR '/nonexistent-weights' must be a folder"),
        (["policy-pack", "init", "/proc/no-such-pack"], "cannot write '/proc/no-such-pack'"),
    ],
    ids=["stack-traversal", "stack-dots", "verify-missing-dir", "pack-unwritable"],
)
def test_cli_hostile_arguments_are_one_exit_2_paragraph(capsys, argv, expected):
    if argv[0] == "plan":
        argv = [*argv, "--cwd", str(ROOT)]
    code = main(argv)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert expected in err
    assert "internal error" not in err


def test_unknown_model_hints_point_only_to_options_where_the_model_was_given(capsys):
    """`size` has --model-config; a stack file or a ServedModel takes a config.json path as the name."""
    from inference_infra.components.serving.model import ServedModel, served_model_problems

    (problem,) = served_model_problems(ServedModel(name="lama-3.1-8b", context_tokens=4096, concurrency=4))
    assert problem.input == "model.name"
    assert "did you mean llama-3.1-8b" in problem.allowed
    assert "config.json" in problem.allowed
    assert "--model-config" not in problem.allowed

    assert main(["size", "--model", "lama-3.1-8b", "--context", "4096", "--concurrency", "4"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--model 'lama-3.1-8b' is not a model preset; did you mean llama-3.1-8b" in err
    assert "(--model-config PATH sizes any other model from its config.json)" in err


def test_a_missing_config_json_as_a_model_name_is_one_problem_under_its_key(tmp_path):
    from inference_infra.components.serving.model import ServedModel, served_model_problems

    missing = str(tmp_path / "config.json")
    (problem,) = served_model_problems(ServedModel(name=missing, context_tokens=4096, concurrency=4))
    assert (problem.input, problem.value) == ("model.name", missing)
    assert problem.allowed == "is not a file (the checkpoint's config.json)"


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (
            "from inference_infra.components.serving.model import ServedModel\n"
            "ServedModel(name='llama-3.1-8b', context_tokens=4096, concurency=4)\n",
            "got an unexpected keyword argument 'concurency' (did you mean 'concurrency'?)",
        ),
        (
            "import pulumi_aws as aws\naws.s3.BucketV2('b', buckt='models')\n",
            "got an unexpected keyword argument 'buckt' (did you mean 'bucket'?)",
        ),
    ],
)
def test_plan_suggests_the_keyword_a_typo_meant(pulumi_project, capsys, program, expected):
    folder = pulumi_project(program)
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert expected in err
    assert "__main__.py:2" in err


def test_one_mistake_is_one_problem_a_wrong_region_with_every_zone_outside_it(tmp_path, capsys):
    """A wrong aws:region puts both of the dev network's zones outside it: one problem, not two."""
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {ROOT / 'infra'}\n")
    stack = (ROOT / "Pulumi.dev.yaml").read_text()
    assert "  aws:region: us-west-2\n" in stack
    (tmp_path / "Pulumi.dev.yaml").write_text(
        stack.replace("  aws:region: us-west-2\n", "  aws:region: eu-west-1\n")
    )
    assert main(["plan", "--cwd", str(tmp_path), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "problems" not in err
    assert "awsNetwork ['us-west-2a', 'us-west-2b'] has zones outside aws:region 'eu-west-1'" in err
