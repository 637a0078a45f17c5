"""Pricing a capture from the catalog."""

from __future__ import annotations

import dataclasses

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.catalog import PriceModel, hourly_price, instance_type
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing import HOURS_PER_MONTH


def _instance(name, instance_type_name, **kwargs):
    return aws.ec2.Instance(name, instance_type=instance_type_name, ami="ami-1", **kwargs)


def test_price_capture_prices_on_demand_and_spot_gpus_and_cpu_machines(plan_of):
    _instance("od", "p5.48xlarge")
    _instance("spot", "g5.xlarge", instance_market_options={"market_type": "spot"})
    _instance("cpu", "m5.large")
    report = price_capture(plan_of())
    by_name = {i.urn.rsplit("::", 1)[1]: i for i in report.items}
    assert set(by_name) == {"od", "spot", "cpu"}
    assert (by_name["cpu"].hourly_usd, by_name["cpu"].category) == (0.096, "compute")
    assert by_name["od"].hourly_usd == pytest.approx(55.04)
    assert by_name["od"].basis == "p5.48xlarge on-demand us-east-1"
    spot = hourly_price(instance_type("g5.xlarge"), region="us-east-1", model=PriceModel.SPOT).hourly_usd
    assert by_name["spot"].hourly_usd == pytest.approx(spot)
    assert report.accelerators_hourly_usd == pytest.approx(55.04 + spot)
    assert report.hourly_usd == pytest.approx(55.04 + spot + 0.096)
    assert report.monthly_usd == pytest.approx(report.hourly_usd * HOURS_PER_MONTH, abs=0.01)


@pytest.mark.stack_config({"aws:region": "us-west-2"})
def test_price_capture_uses_the_stack_region(plan_of):
    _instance("od", "p5.48xlarge")
    (item,) = price_capture(plan_of()).items
    assert item.basis == "p5.48xlarge on-demand us-west-2"


def test_price_capture_prices_a_reservation_once_and_its_instances_at_zero(plan_of):
    reservation = aws.ec2.CapacityReservation(
        "cr",
        instance_type="p5.48xlarge",
        instance_count=2,
        availability_zone="us-east-1a",
        instance_platform="Linux/UNIX",
    )
    target = {"capacity_reservation_target": {"capacity_reservation_id": reservation.id}}
    for i in range(3):  # one more than the reservation holds
        _instance(f"r{i}", "p5.48xlarge", capacity_reservation_specification=target)
    report = price_capture(plan_of())
    by_name = {i.urn.rsplit("::", 1)[1]: i for i in report.items}
    assert by_name["cr"].hourly_usd == pytest.approx(2 * 55.04)
    assert "billed whether used or not" in by_name["cr"].basis
    zero = [n for n in ("r0", "r1", "r2") if by_name[n].hourly_usd == 0]
    assert len(zero) == 2
    assert all(by_name[n].basis == "runs in reservation cr (priced there)" for n in zero)
    assert report.hourly_usd == pytest.approx(3 * 55.04)


def test_price_capture_reads_instance_type_from_launch_template(plan_of):
    template = aws.ec2.LaunchTemplate("lt", instance_type="g5.xlarge", image_id="ami-1")
    aws.ec2.Instance("from-template", launch_template={"id": template.id, "version": "$Latest"})
    report = price_capture(plan_of())
    assert [i.urn.rsplit("::", 1)[1] for i in report.items] == ["from-template"]
    assert report.items[0].basis == "g5.xlarge on-demand us-east-1"


def test_price_capture_prices_gcp_vms_and_tpus(plan_of):
    gcp.compute.Instance(
        "a3",
        machine_type="a3-highgpu-8g",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "img"}},
        network_interfaces=[{"network": "default"}],
        scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
    )
    gcp.tpu.V2Vm(
        "tpu", zone="us-central1-a", accelerator_type="v5litepod-8", runtime_version="v2-alpha-tpuv5-lite"
    )
    report = price_capture(plan_of())
    by_name = {i.urn.rsplit("::", 1)[1]: i for i in report.items}
    a3 = instance_type("a3-highgpu-8g", "gcp")
    assert by_name["a3"].hourly_usd == pytest.approx(
        hourly_price(a3, region="us-central1", model=PriceModel.SPOT).hourly_usd
    )
    v5e = instance_type("v5litepod-8", "gcp")
    assert by_name["tpu"].hourly_usd == pytest.approx(hourly_price(v5e, region="us-central1").hourly_usd)


def test_price_capture_reports_unpriced_accelerators(plan_of):
    gcp.compute.Instance(
        "odd",
        machine_type="n1-standard-8",
        zone="us-central1-a",
        guest_accelerators=[{"type": "nvidia-tesla-p4", "count": 1}],
        boot_disk={"initialize_params": {"image": "img"}},
        network_interfaces=[{"network": "default"}],
    )
    report = price_capture(plan_of())
    assert report.items == []
    ((urn, why),) = report.unpriced
    assert urn.endswith("::odd")
    assert "nvidia-tesla-p4" in why


def test_price_capture_is_the_same_whatever_order_the_engine_registered_in(plan_of):
    """Registration order follows the program's tasks, which finish in any order: the items, and
    which machines a reservation holds, must not."""
    reservation = aws.ec2.CapacityReservation(
        "cr", instance_type="p5.48xlarge", instance_count=1, availability_zone="us-east-1a",
        instance_platform="Linux/UNIX",
    )  # fmt: skip
    target = {"capacity_reservation_target": {"capacity_reservation_id": reservation.id}}
    for name in ("b", "a", "c"):
        _instance(name, "p5.48xlarge", capacity_reservation_specification=target)
    capture = plan_of()
    reordered = dataclasses.replace(capture, resources=list(reversed(capture.resources)))
    first, second = price_capture(capture), price_capture(reordered)
    assert [(i.urn, i.hourly_usd, i.basis) for i in first.items] == [
        (i.urn, i.hourly_usd, i.basis) for i in second.items
    ]
    held = [i.urn.rsplit("::", 1)[1] for i in first.items if i.hourly_usd == 0]
    assert held == ["a"]  # the first in URN order
