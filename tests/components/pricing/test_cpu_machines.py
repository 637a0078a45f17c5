"""CPU machines are priced wherever they run (instances, groups, node groups, fleets, VMs, MIGs, GKE pools),
count as "everything else", and a type no table knows is listed as not priced instead of costing $0."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.catalog import Cloud, find_instance_type, hourly_price
from inference_infra.components.catalog.compute import machine_price
from inference_infra.components.catalog.spot import SNAPSHOT_DATE
from inference_infra.components.offline_plan import PlanResult, plan, render_table
from inference_infra.components.offline_plan.policy import PolicyReport
from inference_infra.components.offline_plan.pricing import price_capture

SUBNETS = ["subnet-0aaaaaaaaaaaaaaaa"]


def _items(report, category: str | None = None) -> dict[str, object]:
    return {i.urn.rsplit("::", 1)[1]: i for i in report.items if category is None or i.category == category}


def _usd(cloud: str, name: str, region: str) -> float:
    return machine_price(cloud, name, region).hourly_usd


def test_cpu_instance_is_priced_not_free(plan_of):
    aws.ec2.Instance("bastion", instance_type="t2.micro", ami="ami-1")
    report = price_capture(plan_of())
    item = _items(report)["bastion"]
    assert item.hourly_usd == pytest.approx(0.0116)
    assert item.category == "compute"
    assert item.basis == "t2.micro on-demand us-east-1 ($0.0116/h)"
    assert report.accelerators_hourly_usd == 0
    assert report.other_hourly_usd == pytest.approx(0.0116)


def test_cpu_spot_instance_without_snapshot_data_is_priced_on_demand_and_says_so(plan_of):
    aws.ec2.Instance(
        "worker", instance_type="t2.micro", ami="ami-1", instance_market_options={"market_type": "spot"}
    )
    item = _items(price_capture(plan_of()))["worker"]
    assert item.hourly_usd == pytest.approx(0.0116)
    assert (
        f"spot (no {SNAPSHOT_DATE} snapshot data for t2.micro in us-east-1; priced at on-demand)"
        in item.basis
    )


def test_cpu_spot_instance_is_priced_from_the_snapshot_at_its_highest_zone(plan_of):
    aws.ec2.Instance(
        "worker", instance_type="t3.micro", ami="ami-1", instance_market_options={"market_type": "spot"}
    )
    item = _items(price_capture(plan_of()))["worker"]
    assert item.hourly_usd == pytest.approx(0.0051)  # use1-az1, the highest of five zones
    assert item.basis == "t3.micro spot $0.0051/h (snapshot 2026-11-24) us-east-1"


def test_eks_system_node_group_is_priced_by_desired_size(plan_of):
    aws.eks.NodeGroup(
        "system", cluster_name="c", node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=SUBNETS,
        instance_types=["m5.large"], scaling_config={"desired_size": 3, "min_size": 1, "max_size": 5},
    )  # fmt: skip
    item = _items(price_capture(plan_of()), "compute")["system"]
    assert item.hourly_usd == pytest.approx(3 * 0.096)
    assert item.basis.startswith("3 x m5.large on-demand us-east-1 ($0.096/h each)")
    assert item.basis.endswith("desired 3 (min 1, max 5)")


def test_cpu_auto_scaling_group_is_priced_from_its_launch_template(plan_of):
    template = aws.ec2.LaunchTemplate("cpu-lt", instance_type="m6i.large", image_id="ami-1")
    aws.autoscaling.Group(
        "cpu", desired_capacity=2, min_size=1, max_size=4, vpc_zone_identifiers=SUBNETS,
        launch_template={"id": template.id},
    )  # fmt: skip
    items = _items(price_capture(plan_of()), "compute")
    assert items["cpu"].hourly_usd == pytest.approx(2 * _usd("aws", "m6i.large", "us-east-1"))
    assert "m6i.12xlarge x 4/96 (size factors)" in items["cpu"].basis
    assert "cpu-lt" not in items  # a template launches nothing itself


def test_mixed_cpu_group_prices_its_spot_share(plan_of):
    template = aws.ec2.LaunchTemplate("mixed-lt", instance_type="c6i.large", image_id="ami-1")
    aws.autoscaling.Group(
        "mixed", desired_capacity=4, min_size=0, max_size=8, vpc_zone_identifiers=SUBNETS,
        mixed_instances_policy={
            "launch_template": {"launch_template_specification": {"launch_template_id": template.id}},
            "instances_distribution": {
                "on_demand_base_capacity": 0, "on_demand_percentage_above_base_capacity": 50,
            },
        },
    )  # fmt: skip
    item = _items(price_capture(plan_of()), "compute")["mixed"]
    assert item.hourly_usd == pytest.approx(2 * 0.085 + 2 * 0.0469)  # spot at its highest zone
    assert "2 on-demand us-east-1" in item.basis
    assert "2 at the spot $0.0469/h (snapshot 2026-11-24)" in item.basis


def test_mixed_cpu_group_without_spot_data_prices_its_spot_share_at_on_demand(plan_of):
    template = aws.ec2.LaunchTemplate("mixed-lt", instance_type="r6i.large", image_id="ami-1")
    aws.autoscaling.Group(
        "mixed", desired_capacity=4, min_size=0, max_size=8, vpc_zone_identifiers=SUBNETS,
        mixed_instances_policy={
            "launch_template": {"launch_template_specification": {"launch_template_id": template.id}},
            "instances_distribution": {
                "on_demand_base_capacity": 0, "on_demand_percentage_above_base_capacity": 50,
            },
        },
    )  # fmt: skip
    item = _items(price_capture(plan_of()), "compute")["mixed"]
    assert item.hourly_usd == pytest.approx(4 * _usd("aws", "r6i.large", "us-east-1"))
    assert f"2 at the spot (no {SNAPSHOT_DATE} snapshot data for r6i.large" in item.basis


def test_cpu_spot_fleet_is_priced_by_target_capacity(plan_of):
    aws.ec2.SpotFleetRequest(
        "fleet", iam_fleet_role="arn:aws:iam::123456789012:role/f", target_capacity=3,
        launch_specifications=[{"instance_type": "c5.large", "ami": "ami-1"}],
    )  # fmt: skip
    item = _items(price_capture(plan_of()), "compute")["fleet"]
    assert item.hourly_usd == pytest.approx(3 * 0.0396)  # the highest of the snapshot's zones
    assert item.basis.startswith("3 x c5.large spot $0.0396/h")


def test_gce_vm_and_managed_instance_group_are_priced(plan_of):
    gcp.compute.Instance(
        "vm", machine_type="e2-medium", zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12", "size": 10}},
        network_interfaces=[{"network": "default"}],
    )  # fmt: skip
    template = gcp.compute.InstanceTemplate(
        "web", machine_type="e2-standard-4", disks=[{"source_image": "debian-12", "boot": True}],
        network_interfaces=[{"network": "default"}],
    )  # fmt: skip
    gcp.compute.InstanceGroupManager(
        "web-mig", zone="us-central1-a", base_instance_name="web", target_size=2,
        versions=[{"instance_template": template.self_link_unique}],
    )  # fmt: skip
    items = _items(price_capture(plan_of()), "compute")
    assert items["vm"].hourly_usd == pytest.approx(_usd("gcp", "e2-medium", "us-central1"))
    assert items["vm"].hourly_usd == pytest.approx(0.0335, abs=1e-4)
    assert items["web-mig"].hourly_usd == pytest.approx(2 * _usd("gcp", "e2-standard-4", "us-central1"))
    assert items["web-mig"].basis.startswith("2 x e2-standard-4 on-demand us-central1")


def test_gce_spot_vm_is_priced_from_the_snapshot_and_shared_core_at_on_demand(plan_of):
    for name, machine in (("spot-vm", "e2-standard-4"), ("small-vm", "e2-medium")):
        gcp.compute.Instance(
            name, machine_type=machine, zone="us-central1-a",
            boot_disk={"initialize_params": {"image": "debian-12", "size": 10}},
            network_interfaces=[{"network": "default"}],
            scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
        )  # fmt: skip
    items = _items(price_capture(plan_of()), "compute")
    assert items["spot-vm"].hourly_usd == pytest.approx(0.05879)
    assert "spot $0.05879/h (snapshot 2026-11-24)" in items["spot-vm"].basis
    assert items["small-vm"].hourly_usd == pytest.approx(_usd("gcp", "e2-medium", "us-central1"))
    assert f"no {SNAPSHOT_DATE} snapshot data for e2-medium in us-central1" in items["small-vm"].basis


def test_gke_cluster_default_pool_is_priced_beside_the_cluster_fee(plan_of):
    gcp.container.Cluster(
        "gke", location="us-central1-a", initial_node_count=3, node_config={"machine_type": "n1-standard-1"}
    )
    gcp.container.NodePool(
        "pool",
        cluster="gke",
        location="us-central1-a",
        node_count=2,
        node_config={"machine_type": "n2-standard-4"},
    )
    report = price_capture(plan_of())
    compute = _items(report, "compute")
    assert compute["gke"].hourly_usd == pytest.approx(3 * 0.0475)
    assert compute["pool"].hourly_usd == pytest.approx(2 * _usd("gcp", "n2-standard-4", "us-central1"))
    assert any(i.category != "compute" for i in report.items if i.urn.endswith("::gke"))  # the fee stays


def test_unknown_machine_type_is_listed_not_priced_naming_it(plan_of):
    aws.ec2.Instance("odd", instance_type="x2iedn.xlarge", ami="ami-1")
    report = price_capture(plan_of())
    ((urn, why),) = report.unpriced
    assert urn.endswith("::odd")
    assert "'x2iedn.xlarge'" in why
    assert "not in the total" in why
    assert report.unpriced_accelerators == []
    assert report.as_json()["unpriced"] == [{"urn": urn, "reason": why}]
    assert "odd" not in _items(report)


def test_plan_table_lists_what_is_not_in_the_total(plan_of):
    aws.ec2.Instance("odd", instance_type="x2iedn.xlarge", ami="ami-1")
    aws.ec2.Instance("bastion", instance_type="t3.small", ami="ami-1")
    capture = plan_of()
    text = render_table(PlanResult(capture, price_capture(capture), PolicyReport(evaluated=False)))
    assert "Not in the total: 1 resource(s) not priced (odd)" in text
    assert "x2iedn.xlarge" in text  # the warning names the type
    everything_else = next(line for line in text.splitlines() if line.startswith("Everything else:"))
    assert "compute $0.02" in everything_else


def test_accelerators_keep_their_prices_and_category(plan_of):
    aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-1")
    aws.ec2.Instance("bastion", instance_type="t3.micro", ami="ami-1")
    report = price_capture(plan_of())
    gpu = _items(report)["gpu"]
    expected = hourly_price(find_instance_type("g5.xlarge", Cloud.AWS), region="us-east-1")
    assert (gpu.hourly_usd, gpu.basis, gpu.category) == (expected.hourly_usd, expected.basis, "accelerator")
    assert report.accelerators_hourly_usd == pytest.approx(expected.hourly_usd)
    assert report.other_hourly_usd == pytest.approx(0.0104, abs=1e-4)


def test_plan_json_of_a_program_with_cpu_machines(pulumi_project):
    project = pulumi_project(
        """
        import pulumi_aws as aws
        import pulumi_gcp as gcp

        aws.ec2.Instance("web", instance_type="t2.micro", ami="ami-0123456789abcdef0")
        aws.ec2.Instance("odd", instance_type="u-6tb1.metal", ami="ami-0123456789abcdef0")
        gcp.container.Cluster("gke", location="us-central1", initial_node_count=3,
                              node_config={"machine_type": "n1-standard-1"})
        """,
        {"dev": "config:\n  aws:region: us-east-1\n  gcp:project: p\n  gcp:region: us-central1\n"},
    )
    cost = plan(project, "dev").as_json()["cost"]
    compute = {i["urn"].rsplit("::", 1)[1]: i for i in cost["items"] if i["category"] == "compute"}
    assert compute["web"]["hourly_usd"] == pytest.approx(0.0116)
    assert compute["gke"]["hourly_usd"] == pytest.approx(3 * 0.0475)
    assert cost["accelerators_hourly_usd"] == 0
    assert cost["other_hourly_usd"] == pytest.approx(cost["hourly_usd"])
    assert cost["other_hourly_usd"] >= 0.0116 + 3 * 0.0475
    assert [u["urn"].rsplit("::", 1)[1] for u in cost["unpriced"]] == ["odd"]
    assert "'u-6tb1.metal'" in cost["unpriced"][0]["reason"]


def test_eks_node_group_without_a_type_is_priced_as_the_eks_default(plan_of):
    aws.eks.NodeGroup(
        "default-type", cluster_name="c", node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=SUBNETS,
        scaling_config={"desired_size": 2, "min_size": 2, "max_size": 2},
    )  # fmt: skip
    item = _items(price_capture(plan_of()), "compute")["default-type"]
    assert item.hourly_usd == pytest.approx(2 * _usd("aws", "t3.medium", "us-east-1"))
    assert item.basis.startswith("2 x t3.medium on-demand us-east-1")
