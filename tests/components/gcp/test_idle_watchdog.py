"""IdleGpuWatchdog (GCP) under Pulumi's mock runtime: what the engine would receive.

Checked against pulumi-gcp 10.2's Python SDK (cloudfunctionsv2 FunctionServiceConfig:
ingress_settings takes ALLOW_ALL, ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB; cloudscheduler
JobHttpTarget.oidc_token; Job.attempt_deadline: 15 s to 30 min for HTTP targets, so timeout_seconds is
60..1800; FunctionServiceConfig.available_memory takes k, M, G, Mi, Gi units) and Cloud Run's ingress
page (Cloud Scheduler in the same project is internal traffic; cloud.google.com/run/docs/securing/ingress,
read 2026-12-02).
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import IdleGpuWatchdog, IdleGpuWatchdogArgs
from inference_infra.components.gcp.idle_watchdog import (
    PACKAGE,
    READ_PERMISSIONS,
    STOP_PERMISSIONS,
    price_table,
    source_files,
)
from inference_infra.components.gcp.idle_watchdog_args import cron_schedule, validate_idle_watchdog
from inference_infra.lambdas import gcp_idle_watchdog
from inference_infra.lambdas.gcp_idle_watchdog.prices import parse_prices
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings

FUNCTION = "gcp:cloudfunctionsv2/function:Function"
ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
MEMBER = "gcp:projects/iAMMember:IAMMember"
JOB = "gcp:cloudscheduler/job:Job"
INVOKER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"


def test_gcp_idle_watchdog_function_is_internal_single_and_configured_like_the_contract(plan_of):
    capture = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(idle_minutes=60, dry_run=True)))
    function = capture.one(FUNCTION).props
    service = function["serviceConfig"]
    assert service["ingressSettings"] == "ALLOW_INTERNAL_ONLY"
    assert service["maxInstanceCount"] == 1
    assert service["maxInstanceRequestConcurrency"] == 1
    assert service["availableMemory"] == "256Mi"
    assert capture.one(JOB).props["attemptDeadline"] == "300s"
    assert function["buildConfig"]["runtime"] == "python313"
    assert function["buildConfig"]["entryPoint"] == "handler"
    env = service["environmentVariables"]
    settings = Settings.from_env(env)  # the function reads exactly what the component renders
    assert settings.idle_minutes == 60
    assert settings.dry_run is True
    assert (settings.tag_key, settings.tag_value) == ("auto-shutdown", "true")
    assert settings.projects == ("test-project",)
    assert function["location"] == "us-central1"


def test_gcp_idle_watchdog_grants_list_and_stop_only(plan_of):
    capture = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs()))
    roles = {r.props["roleId"]: r.props["permissions"] for r in capture.of_type(ROLE)}
    assert roles == {"watchdogRead": list(READ_PERMISSIONS), "watchdogStop": list(STOP_PERMISSIONS)}
    granted = [p for permissions in roles.values() for p in permissions]
    assert not [p for p in granted if "delete" in p or "*" in p or p.endswith(".setIamPolicy")]
    grants = capture.of_type(MEMBER)
    assert {g.props["role"].rsplit("/", 1)[-1] for g in grants} <= {"watchdogRead", "watchdogStop"} | {
        g.props["role"] for g in grants
    }
    assert all(g.props["member"].startswith("serviceAccount:") for g in grants)
    assert not [g for g in grants if g.props["role"].startswith("roles/")]  # no predefined project role


def test_gcp_idle_watchdog_grants_in_every_watched_project(plan_of):
    args = IdleGpuWatchdogArgs(projects=["acme-inference-prod", "acme-batch-prod"])
    capture = plan_of(IdleGpuWatchdog("watchdog", args))
    assert sorted({g.props["project"] for g in capture.of_type(MEMBER)}) == [
        "acme-batch-prod",
        "acme-inference-prod",
    ]
    env = capture.one(FUNCTION).props["serviceConfig"]["environmentVariables"]
    assert env["PROJECTS"] == "acme-inference-prod,acme-batch-prod"


def test_gcp_idle_watchdog_scheduler_invokes_with_oidc_and_is_the_only_invoker(plan_of):
    capture = plan_of(
        IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(schedule_expression="rate(10 minutes)"))
    )
    job = capture.one(JOB).props
    assert job["schedule"] == "*/10 * * * *"
    assert job["timeZone"] == "Etc/UTC"
    target = job["httpTarget"]
    assert target["httpMethod"] == "POST"
    assert json.loads(__import__("base64").b64decode(target["body"])) == {}
    oidc = target["oidcToken"]
    assert oidc["audience"] == target["uri"]
    (invoker,) = capture.of_type(INVOKER)
    assert invoker.props["role"] == "roles/run.invoker"
    assert invoker.props["member"].startswith("serviceAccount:")
    assert oidc["serviceAccountEmail"] == invoker.props["member"].removeprefix("serviceAccount:")
    assert not [r for r in capture.resources if "allUsers" in json.dumps(r.props, default=str)]


def test_gcp_idle_watchdog_source_bucket_is_private_and_the_object_name_follows_the_code(plan_of):
    capture = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs()))
    bucket = capture.one("gcp:storage/bucket:Bucket").props
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    obj = capture.one("gcp:storage/bucketObject:BucketObject").props
    assert obj["name"].startswith(f"{PACKAGE}-")
    assert obj["name"].endswith(".zip")


def test_gcp_idle_watchdog_source_has_main_requirements_and_every_module():
    files = source_files(price_table("us-central1"))
    assert files["main.py"].decode().startswith(f"from lambdas.{PACKAGE}.handler import handler")
    requirements = files["requirements.txt"].decode()
    assert "google-cloud-compute" in requirements
    assert "google-cloud-tpu" in requirements
    modules = {
        p.rsplit("/", 1)[-1] for p in files if p.startswith(f"lambdas/{PACKAGE}/") and p.endswith(".py")
    }
    from pathlib import Path

    assert modules == {p.name for p in Path(gcp_idle_watchdog.__file__).parent.glob("*.py")}
    core = {p.rsplit("/", 1)[-1] for p in files if p.startswith("lambdas/watchdog_core/")}
    assert core == {
        p.name for p in (Path(gcp_idle_watchdog.__file__).parent.parent / "watchdog_core").glob("*.py")
    }
    assert "lambdas/__init__.py" in files
    table = parse_prices(json.loads(files[f"lambdas/{PACKAGE}/prices.json"]))
    assert table.on_demand["a3-highgpu-8g"] > 50
    assert table.on_demand["v5litepod-8"] > 5
    # the archive is importable as the function's runtime imports it
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    assert "main.py" in zipfile.ZipFile(buffer).namelist()


def test_gcp_idle_watchdog_creates_a_topic_only_the_function_publishes_to(plan_of):
    capture = plan_of(IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(create_pubsub_topic=True)))
    capture.one("gcp:pubsub/topic:Topic")
    (publish,) = capture.of_type("gcp:pubsub/topicIAMMember:TopicIAMMember")
    assert publish.props["role"] == "roles/pubsub.publisher"
    env = capture.one(FUNCTION).props["serviceConfig"]["environmentVariables"]
    assert "PUBSUB_TOPIC" in env


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tag_key", "AutoShutdown", "label key"),
        ("schedule_expression", "cron(0/5 * * * ? *)", "5-field unix cron"),
        ("schedule_expression", "rate(7 minutes)", "dividing an hour"),
        ("idle_minutes", 5, "must be at least 10"),
        ("metric_period_seconds", 420, "must divide the idle window"),
        ("memory_size_mib", 300, "one of 128"),
        ("projects", ["Acme"], "GCP project ids"),
        ("tpu_locations", [], "non-empty list of zones"),
        ("pubsub_topic", "arn:aws:sns:us-east-1:123456789012:x", "projects/<project>/topics/<topic>"),
    ],
)
def test_gcp_idle_watchdog_rejects_bad_input_before_any_resource(plan_of, field, value, message):
    args = dataclasses.replace(IdleGpuWatchdogArgs(), **{field: value})
    with pytest.raises(InputError, match=message) as error:
        IdleGpuWatchdog("watchdog", args)
    assert field in str(error.value)
    assert [r for r in plan_of().resources if r.type.startswith("gcp:")] == []


def test_gcp_idle_watchdog_schedule_vocabulary_matches_aws_rates():
    assert cron_schedule("rate(5 minutes)") == "*/5 * * * *"
    assert cron_schedule("rate(1 hour)") == "0 * * * *"
    assert cron_schedule("rate(1 day)") == "0 0 * * *"
    assert cron_schedule("*/15 8-18 * * 1-5") == "*/15 8-18 * * 1-5"
    assert cron_schedule("rate(1 minutes)") is None
    assert validate_idle_watchdog(IdleGpuWatchdogArgs()) == []
