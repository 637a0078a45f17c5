"""Pricing the resources around the accelerators, one family at a time, on captured SDK resources."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.catalog.resources import RESOURCE_RATES, resource_rate
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing import HOURS_PER_MONTH

GCP = {"gcp:project": "p", "gcp:region": "us-central1"}


def _by_name(report):
    out = {}
    for item in report.items:
        out.setdefault(item.urn.rsplit("::", 1)[1], []).append(item)
    return out


def _other(report, name):
    (item,) = [i for i in _by_name(report)[name] if i.category != "accelerator"]
    return item


def test_resource_rates_every_row_has_source_date_and_a_positive_price():
    keys = [r.key for r in RESOURCE_RATES]
    assert len(keys) == len(set(keys))
    for rate in RESOURCE_RATES:
        assert rate.source.startswith("https://"), rate.key
        assert rate.as_of.year >= 2025, rate.key
        assert all(v > 0 for v in rate.usd.values()), rate.key


_UNITS = {
    "GiB-month",
    "GB-month",
    "IOPS-month",
    "MiB/s-month",
    "hour",
    "AZ-hour",
    "VM-hour",
    "LCU-hour",
    "NLCU-hour",
    "GB",
    "GB-second",
    "1M requests",
    "1k requests",
    "1k operations",
    "key-month",
    "secret-month",
    "zone-month",
    "1M queries",
    "vCPU-hour",
    "GB-hour",
    "vCPU-second",
    "GiB-second",
}


def test_resource_rates_use_known_units_and_dates_no_later_than_their_last_check():
    from datetime import date

    for rate in RESOURCE_RATES:
        assert rate.unit in _UNITS, (rate.key, rate.unit)
        assert rate.as_of <= date(2026, 12, 2), rate.key
        if rate.checked_against:  # re-checked rows carry the copy they were checked against and its day
            assert rate.as_of in (date(2026, 11, 24), date(2026, 12, 2)), rate.key
            assert str(rate.as_of) in rate.checked_against or rate.as_of == date(2026, 11, 24), rate.key
            assert rate.checked_against.startswith("https://"), rate.key
        assert rate.free >= 0, rate.key
    checked = {r.key for r in RESOURCE_RATES if r.checked_against}
    assert {"aws.lambda.requests", "gcp.gcs.standard.storage"} <= checked


def test_ebs_gp3_prices_capacity_and_iops_and_throughput_above_the_baseline(plan_of):
    aws.ec2.Instance(
        "gpu",
        instance_type="p5.48xlarge",
        ami="ami-1",
        root_block_device={"volume_type": "gp3", "volume_size": 300, "iops": 6000, "throughput": 500},
    )
    report = price_capture(plan_of())
    storage = _other(report, "gpu")
    monthly = 300 * 0.08 + (6000 - 3000) * 0.005 + (500 - 125) * 0.04  # $54/month
    assert storage.category == "storage"
    assert storage.hourly_usd == pytest.approx(monthly / HOURS_PER_MONTH)
    assert "gp3 300 GiB" in storage.basis
    assert "us-east-1" in storage.basis
    assert report.accelerators_hourly_usd == pytest.approx(55.04)
    assert report.hourly_usd == pytest.approx(55.04 + monthly / HOURS_PER_MONTH, abs=1e-4)


def test_ebs_gp3_within_the_baseline_pays_capacity_only(plan_of):
    aws.ebs.Volume("data", availability_zone="us-east-1a", size=100, type="gp3", iops=3000, throughput=125)
    item = _other(price_capture(plan_of()), "data")
    assert item.hourly_usd == pytest.approx(100 * 0.08 / HOURS_PER_MONTH)


def test_ebs_io2_prices_every_provisioned_iops(plan_of):
    aws.ebs.Volume("db", availability_zone="us-east-1a", size=100, type="io2", iops=4000)
    item = _other(price_capture(plan_of()), "db")
    assert item.hourly_usd == pytest.approx((100 * 0.125 + 4000 * 0.065) / HOURS_PER_MONTH)


def test_instance_volumes_come_from_its_launch_template(plan_of):
    template = aws.ec2.LaunchTemplate(
        "lt",
        instance_type="g6e.xlarge",
        block_device_mappings=[
            {"device_name": "/dev/xvda", "ebs": {"volume_type": "gp3", "volume_size": 200}}
        ],
    )
    aws.ec2.Instance("a", launch_template={"id": template.id, "version": "1"})
    report = price_capture(plan_of())
    assert _other(report, "a").hourly_usd == pytest.approx(200 * 0.08 / HOURS_PER_MONTH)
    assert "lt" not in _by_name(report)  # a template launches nothing


def test_instance_without_a_root_size_is_listed_unsized_not_guessed(plan_of):
    aws.ec2.Instance("a", instance_type="g6e.xlarge", ami="ami-1")
    report = price_capture(plan_of())
    assert [i.category for i in _by_name(report)["a"]] == ["accelerator"]
    ((urn, why),) = report.unsized
    assert urn.endswith("::a")
    assert "AMI" in why
    assert report.as_json()["unsized"][0]["reason"] == why


def test_autoscaling_group_volumes_scale_with_desired_capacity(plan_of):
    template = aws.ec2.LaunchTemplate(
        "lt",
        instance_type="g6e.xlarge",
        block_device_mappings=[
            {"device_name": "/dev/xvda", "ebs": {"volume_type": "gp3", "volume_size": 100}}
        ],
    )
    aws.autoscaling.Group(
        "asg",
        desired_capacity=3,
        min_size=0,
        max_size=4,
        availability_zones=["us-east-1a"],
        launch_template={"id": template.id, "version": "1"},
    )
    item = _other(price_capture(plan_of()), "asg")
    assert item.hourly_usd == pytest.approx(3 * 100 * 0.08 / HOURS_PER_MONTH)
    assert item.basis.startswith("3 x (")


def test_network_nat_gateway_eip_and_interface_endpoint_are_priced_hourly(plan_of):
    aws.ec2.NatGateway("nat", subnet_id="subnet-1", allocation_id="eipalloc-1")
    aws.ec2.Eip("ip", domain="vpc")
    aws.ec2.VpcEndpoint(
        "ssm",
        vpc_id="vpc-1",
        service_name="com.amazonaws.us-east-1.ssm",
        vpc_endpoint_type="Interface",
        subnet_ids=["subnet-1", "subnet-2"],
    )
    aws.ec2.VpcEndpoint("s3", vpc_id="vpc-1", service_name="com.amazonaws.us-east-1.s3")
    report = price_capture(plan_of())
    assert _other(report, "nat").hourly_usd == pytest.approx(0.045)
    assert _other(report, "ip").hourly_usd == pytest.approx(0.005)
    assert _other(report, "ssm").hourly_usd == pytest.approx(2 * 0.01)
    assert _other(report, "s3").hourly_usd == 0.0
    assert {_other(report, n).category for n in ("nat", "ip", "ssm")} == {"network"}


def test_load_balancers_are_priced_by_type(plan_of):
    aws.lb.LoadBalancer("alb", internal=True, subnets=["subnet-1", "subnet-2"])
    aws.lb.LoadBalancer("nlb", internal=True, load_balancer_type="network", subnets=["subnet-1"])
    report = price_capture(plan_of())
    assert _other(report, "alb").hourly_usd == pytest.approx(0.0225)
    assert _other(report, "nlb").hourly_usd == pytest.approx(0.0225)
    keys = {(u.name, u.usage_key) for u in report.usage_based}
    assert ("alb", "capacity_units") in keys
    assert ("nlb", "capacity_units") in keys


def test_efs_is_usage_based_unless_throughput_is_provisioned(plan_of):
    aws.efs.FileSystem("elastic", throughput_mode="elastic")
    aws.efs.FileSystem("prov", throughput_mode="provisioned", provisioned_throughput_in_mibps=100)
    report = price_capture(plan_of())
    assert _other(report, "elastic").hourly_usd == 0.0
    assert _other(report, "prov").hourly_usd == pytest.approx(100 * 6.0 / HOURS_PER_MONTH)
    assert ("elastic", "storage_gb") in {(u.name, u.usage_key) for u in report.usage_based}


@pytest.mark.stack_config(GCP)
def test_gcp_persistent_disk_and_boot_disk_and_local_ssd(plan_of):
    gcp.compute.Disk("data", type="pd-ssd", size=500, zone="us-central1-a")
    gcp.compute.Instance(
        "vm",
        machine_type="g2-standard-8",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12", "type": "pd-balanced", "size": 200}},
        scratch_disks=[{"interface": "NVME"}, {"interface": "NVME"}],
        network_interfaces=[{"network": "default", "access_configs": [{}]}],
    )
    report = price_capture(plan_of())
    assert _other(report, "data").hourly_usd == pytest.approx(500 * 0.17 / HOURS_PER_MONTH)
    vm = {i.category: i for i in _by_name(report)["vm"]}
    assert vm["storage"].hourly_usd == pytest.approx((200 * 0.10 + 2 * 375 * 0.08) / HOURS_PER_MONTH)
    assert vm["network"].hourly_usd == pytest.approx(0.005)
    assert vm["accelerator"].hourly_usd > 0


@pytest.mark.stack_config(GCP)
def test_gcp_filestore_is_priced_by_tier_and_capacity(plan_of):
    gcp.filestore.Instance(
        "cache",
        tier="ZONAL",
        location="us-central1-a",
        file_shares={"name": "models", "capacity_gb": 2560},
        networks=[{"network": "default", "modes": ["MODE_IPV4"]}],
    )
    item = _other(price_capture(plan_of()), "cache")
    assert item.hourly_usd * HOURS_PER_MONTH == pytest.approx(640.0)  # the figure


@pytest.mark.stack_config(GCP)
def test_gcp_filestore_rejects_guessing_an_unknown_tier(plan_of):
    gcp.filestore.Instance(
        "cache",
        tier="SOMETHING_NEW",
        location="us-central1-a",
        file_shares={"name": "models", "capacity_gb": 1024},
        networks=[{"network": "default", "modes": ["MODE_IPV4"]}],
    )
    report = price_capture(plan_of())
    ((urn, why),) = report.unpriced
    assert urn.endswith("::cache")
    assert "SOMETHING_NEW" in why


@pytest.mark.stack_config(GCP)
def test_gcp_cloud_nat_bills_per_vm_and_forwarding_rules_past_five_are_cheaper(plan_of):
    for n in range(2):
        gcp.compute.Instance(
            f"vm{n}",
            machine_type="g2-standard-8",
            zone="us-central1-a",
            boot_disk={"initialize_params": {"image": "debian-12", "size": 50}},
            network_interfaces=[{"network": "default"}],
        )
    gcp.compute.RouterNat(
        "nat",
        router="r",
        region="us-central1",
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
    )
    for n in range(6):
        gcp.compute.ForwardingRule(f"fr{n}", region="us-central1", load_balancing_scheme="INTERNAL_MANAGED")
    report = price_capture(plan_of())
    assert _other(report, "nat").hourly_usd == pytest.approx(2 * 0.0014)
    rules = sorted(_other(report, f"fr{n}").hourly_usd for n in range(6))
    assert rules == pytest.approx([0.01, 0.025, 0.025, 0.025, 0.025, 0.025])


def test_resource_rate_falls_back_to_the_reference_region_and_says_so():
    rate = resource_rate("aws.nat_gateway.hour")
    assert rate.rate("eu-west-1") == (0.045, "us-east-1 (reference; no eu-west-1 rate in the catalog)")
    assert resource_rate("aws.no-such-thing") is None


def test_control_planes_keys_and_secrets_are_priced(plan_of):
    aws.eks.Cluster("eks", role_arn="arn:aws:iam::1:role/r", vpc_config={"subnet_ids": ["subnet-1"]})
    aws.kms.Key("key")
    aws.secretsmanager.Secret("token")
    report = price_capture(plan_of())
    assert _other(report, "eks").hourly_usd == pytest.approx(0.10)
    assert _other(report, "key").hourly_usd == pytest.approx(1.0 / HOURS_PER_MONTH)
    assert _other(report, "token").hourly_usd == pytest.approx(0.40 / HOURS_PER_MONTH)
    assert _other(report, "eks").category == "control-plane"
