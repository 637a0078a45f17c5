"""Usage-priced items: listed with unit prices, priced from a usage file, typos rejected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing import HOURS_PER_MONTH, apply_usage_file
from inference_infra.components.pricing.usage import read_usage_file

REPO_ROOT = Path(__file__).resolve().parents[3]


def _keys(report):
    return {(u.name, u.usage_key) for u in report.usage_based}


def test_usage_lines_list_buckets_lambda_logs_and_transfer_with_unit_prices(plan_of):
    aws.s3.Bucket("weights")
    aws.lambda_.Function(
        "fn",
        role="arn:aws:iam::1:role/r",
        runtime="python3.13",
        handler="h.h",
        architectures=["arm64"],
        code=None,
    )
    aws.cloudwatch.LogGroup("logs")
    report = price_capture(plan_of())
    assert {
        ("weights", "storage_gb"),
        ("fn", "monthly_requests"),
        ("fn", "monthly_gb_seconds"),
        ("logs", "monthly_data_ingested_gb"),
        ("data-transfer", "aws_internet_out_gb"),
    } <= _keys(report)
    lines = {(u.name, u.usage_key): u.as_json() for u in report.usage_based}
    assert lines[("weights", "storage_gb")]["usd_per_unit"] == pytest.approx(0.023)
    assert lines[("fn", "monthly_gb_seconds")]["usd_per_unit"] == pytest.approx(0.0000133334)  # arm64
    assert lines[("fn", "monthly_requests")]["usd_per_unit"] == pytest.approx(0.2e-6)
    assert lines[("weights", "storage_gb")]["as_of"]
    assert lines[("weights", "storage_gb")]["source"]
    assert "quantity" not in lines[("weights", "storage_gb")]
    assert report.hourly_usd == 0.0  # nothing is priced without quantities


@pytest.mark.stack_config({"gcp:project": "p", "gcp:region": "us-central1"})
def test_usage_gcs_bucket_is_listed(plan_of):
    gcp.storage.Bucket("models", location="US-CENTRAL1")
    assert ("models", "storage_gb") in _keys(price_capture(plan_of()))


def test_usage_file_prices_the_quantities_it_gives(plan_of):
    aws.s3.Bucket("weights")
    aws.ec2.NatGateway("nat", subnet_id="subnet-1", allocation_id="eipalloc-1")
    report = price_capture(plan_of())
    fixed = report.hourly_usd
    apply_usage_file(
        report,
        {
            "weights": {"storage_gb": 1000, "monthly_get_requests": 50_000},
            "nat": {"monthly_data_processed_gb": 200},
            "data-transfer": {"aws_inter_az_gb": 100},
        },
    )
    usage = {i.urn.rsplit("::", 1)[-1]: i for i in report.items if i.category == "usage"}
    assert usage["weights"].hourly_usd * HOURS_PER_MONTH == pytest.approx(1000 * 0.023 + 50 * 0.0004)
    assert usage["nat"].hourly_usd * HOURS_PER_MONTH == pytest.approx(200 * 0.045)
    assert usage["data-transfer"].hourly_usd * HOURS_PER_MONTH == pytest.approx(100 * 0.02)
    assert report.hourly_usd == pytest.approx(fixed + sum(i.hourly_usd for i in usage.values()), abs=1e-3)
    priced = {(u.name, u.usage_key): u.monthly_usd for u in report.usage_based if u.quantity is not None}
    assert priced[("weights", "storage_gb")] == pytest.approx(23.0)


def test_usage_file_rejects_an_unknown_resource_naming_close_matches(plan_of):
    aws.s3.Bucket("weights")
    report = price_capture(plan_of())
    with pytest.raises(InputError, match=r"resource 'weight' is not in the plan; close matches: weights"):
        apply_usage_file(report, {"weight": {"storage_gb": 1}})


def test_usage_file_rejects_an_unknown_key_listing_the_allowed_ones(plan_of):
    aws.s3.Bucket("weights")
    report = price_capture(plan_of())
    with pytest.raises(InputError, match=r"no usage key 'storage_tb'; allowed: monthly_get_requests"):
        apply_usage_file(report, {"weights": {"storage_tb": 1}})


def test_usage_file_rejects_a_negative_quantity(plan_of):
    aws.s3.Bucket("weights")
    report = price_capture(plan_of())
    with pytest.raises(InputError, match=r"weights.storage_gb = -1; must be a non-negative number"):
        apply_usage_file(report, {"weights": {"storage_gb": -1}})


def test_read_usage_file_reads_yaml_and_json_and_rejects_a_wrong_shape(tmp_path):
    (tmp_path / "u.yml").write_text("version: 0.1\nresource_usage:\n  weights:\n    storage_gb: 5\n")
    (tmp_path / "u.json").write_text(json.dumps({"resource_usage": {"weights": {"storage_gb": 5}}}))
    (tmp_path / "bad.yml").write_text("weights:\n  storage_gb: 5\n")
    assert read_usage_file(tmp_path / "u.yml") == {"weights": {"storage_gb": 5}}
    assert read_usage_file(tmp_path / "u.json") == {"weights": {"storage_gb": 5}}
    with pytest.raises(InputError, match="must hold a mapping `resource_usage"):
        read_usage_file(tmp_path / "bad.yml")
    with pytest.raises(InputError, match="--usage-file"):
        read_usage_file(tmp_path / "missing.yml")


def test_plan_usage_file_option_prices_usage_in_json_and_exits_2_on_a_typo(pulumi_project, tmp_path):
    project = pulumi_project(
        "import pulumi_aws as aws\naws.s3.Bucket('weights')\n", {"dev": "config:\n  aws:region: us-east-1\n"}
    )
    good, bad = tmp_path / "usage.yml", tmp_path / "typo.yml"
    good.write_text("resource_usage:\n  weights:\n    storage_gb: 730\n")
    bad.write_text("resource_usage:\n  weigths:\n    storage_gb: 1\n")

    def run(usage: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "inference_infra.components.cli",
                "plan",
                "--json",
                "--cwd",
                str(project),
                "--usage-file",
                str(usage),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
        )

    ok = run(good)
    cost = json.loads(ok.stdout)["cost"]
    assert cost["hourly_usd"] == pytest.approx(730 * 0.023 / HOURS_PER_MONTH, abs=1e-4)
    (line,) = [u for u in cost["usage_based"] if u["usage_key"] == "storage_gb"]
    assert line["quantity"] == 730
    typo = run(bad)
    assert typo.returncode == 2
    assert "'weigths' is not in the plan; close matches: weights" in typo.stderr.replace("\n", " ")


def test_usage_ecr_repository_storage_is_listed_and_priced_from_the_usage_file(plan_of):
    aws.ecr.Repository("images")
    report = price_capture(plan_of())
    (line,) = [u for u in report.usage_based if u.name == "images"]
    assert line.usage_key == "storage_gb"
    assert line.as_json()["usd_per_unit"] == pytest.approx(0.10)
    assert "aws.amazon.com/ecr/pricing" in line.as_json()["source"]
    assert report.hourly_usd == 0.0
    apply_usage_file(report, {"images": {"storage_gb": 250}})
    (item,) = [i for i in report.items if i.category == "usage"]
    assert item.hourly_usd * HOURS_PER_MONTH == pytest.approx(25.0)


@pytest.mark.stack_config({"gcp:project": "p", "gcp:region": "us-central1"})
def test_usage_artifact_registry_stores_in_standard_and_remote_repositories_not_virtual_ones(plan_of):
    gcp.artifactregistry.Repository("images", repository_id="images", format="DOCKER", location="us-central1")
    gcp.artifactregistry.Repository(
        "hub", repository_id="hub", format="DOCKER", location="us-central1", mode="REMOTE_REPOSITORY",
        remote_repository_config={"docker_repository": {"public_repository": "DOCKER_HUB"}},
    )  # fmt: skip
    gcp.artifactregistry.Repository(
        "all", repository_id="all", format="DOCKER", location="us-central1", mode="VIRTUAL_REPOSITORY",
        virtual_repository_config={"upstream_policies": [{"id": "hub", "repository": "hub", "priority": 1}]},
    )  # fmt: skip
    report = price_capture(plan_of())
    keys = _keys(report)
    assert ("images", "storage_gb") in keys
    assert ("hub", "storage_gb") in keys
    assert not [k for k in keys if k[0] == "all"]
    apply_usage_file(report, {"images": {"storage_gb": 40}})
    (item,) = [i for i in report.items if i.category == "usage"]
    assert item.hourly_usd * HOURS_PER_MONTH == pytest.approx(4.0)
    assert "40 storage_gb x $0.1" in item.basis


def test_usage_gcp_idle_watchdog_function_is_priced_like_cloud_run(plan_of):
    """The GCP watchdog's function lists requests, vCPU- and GiB-seconds (Cloud Run's request-based
    billing, Tier 1, cloud.google.com/run/pricing read 2026-12-02) and its source bucket's storage."""
    from inference_infra.components.gcp import IdleGpuWatchdog, IdleGpuWatchdogArgs

    watchdog = IdleGpuWatchdog("idle-gpu-watchdog", IdleGpuWatchdogArgs())
    report = price_capture(plan_of(watchdog))
    lines = {(u.name, u.usage_key): u.as_json() for u in report.usage_based}
    assert lines[("idle-gpu-watchdog", "monthly_requests")]["usd_per_unit"] == pytest.approx(0.4e-6)
    assert lines[("idle-gpu-watchdog", "monthly_vcpu_seconds")]["usd_per_unit"] == pytest.approx(0.000024)
    assert lines[("idle-gpu-watchdog", "monthly_gib_seconds")]["usd_per_unit"] == pytest.approx(0.0000025)
    assert ("idle-gpu-watchdog-source", "storage_gb") in lines
    apply_usage_file(
        report,
        {
            "idle-gpu-watchdog": {
                "monthly_requests": 8640,
                "monthly_vcpu_seconds": 86400,
                "monthly_gib_seconds": 21600,
            }
        },
    )
    priced = {(u.name, u.usage_key): u.monthly_usd for u in report.usage_based if u.quantity is not None}
    # a run every 5 minutes (8,640 a month) of 10 s at 1 vCPU and 256 MiB: about $2.13 before the free tier
    assert sum(priced.values()) == pytest.approx(
        8640e-6 * 0.4 + 86400 * 0.000024 + 21600 * 0.0000025, abs=1e-3
    )
