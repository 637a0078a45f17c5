"""GCE managed instance groups are priced as their target size of the template's machine, and a resource
on an explicit provider is priced in that provider's region."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.catalog import Cloud, PriceModel, find_instance_type
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing.core import hourly_price


def _template(cls, name: str, machine: str, **extra):
    return cls(
        name,
        machine_type=machine,
        disks=[{"source_image": "debian-12", "boot": True}],
        network_interfaces=[{"network": "default"}],
        scheduling={"on_host_maintenance": "TERMINATE", **extra.pop("scheduling", {})},
        **extra,
    )


def _by_name(report) -> dict[str, object]:
    return {i.urn.rsplit("::", 1)[1]: i for i in report.items}


def test_managed_instance_groups_are_priced_by_target_size_and_template(plan_of):
    zonal = _template(gcp.compute.InstanceTemplate, "l4", "g2-standard-8")
    gcp.compute.InstanceGroupManager(
        "l4-mig", zone="us-central1-a", base_instance_name="l4", target_size=3,
        versions=[{"instance_template": zonal.self_link_unique}],
    )  # fmt: skip
    regional = _template(gcp.compute.RegionInstanceTemplate, "a100", "a2-highgpu-1g", region="us-central1")
    gcp.compute.RegionInstanceGroupManager(
        "a100-mig", region="us-central1", base_instance_name="a100", target_size=2,
        versions=[{"instance_template": regional.id}],
    )  # fmt: skip
    items = _by_name(price_capture(plan_of()))
    g2 = hourly_price(find_instance_type("g2-standard-8", Cloud.GCP), region="us-central1", count=1)
    a2 = hourly_price(find_instance_type("a2-highgpu-1g", Cloud.GCP), region="us-central1", count=1)
    assert items["l4-mig"].hourly_usd == pytest.approx(3 * g2.hourly_usd)
    assert items["l4-mig"].basis.startswith("3 x g2-standard-8 on-demand us-central1")
    assert items["a100-mig"].hourly_usd == pytest.approx(2 * a2.hourly_usd)
    assert "l4" not in items or items["l4"].hourly_usd == 0  # the template itself runs nothing


def test_managed_instance_group_of_spot_vms_is_priced_spot(plan_of):
    spot = _template(
        gcp.compute.InstanceTemplate,
        "l4-spot",
        "g2-standard-8",
        scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
        labels={"environment": "dev"},
    )
    gcp.compute.InstanceGroupManager(
        "spot-mig", zone="us-central1-a", base_instance_name="l4", target_size=2,
        versions=[{"instance_template": spot.self_link}],
    )  # fmt: skip
    capture = plan_of()
    item = _by_name(price_capture(capture))["spot-mig"]
    spot_rate = hourly_price(
        find_instance_type("g2-standard-8", Cloud.GCP), region="us-central1", model=PriceModel.SPOT, count=1
    )
    assert item.hourly_usd == pytest.approx(2 * spot_rate.hourly_usd)


def test_resources_on_an_explicit_provider_are_priced_in_its_region(plan_of):
    west = aws.Provider("west", region="eu-west-1")
    aws.ec2.Instance(
        "gpu", instance_type="g5.xlarge", ami="ami-1", opts=pulumi.ResourceOptions(provider=west)
    )
    item = _by_name(price_capture(plan_of()))["gpu"]
    assert "eu-west-1" in item.basis
