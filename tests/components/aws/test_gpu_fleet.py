"""GpuFleet under the mock runtime: what the engine would receive, and every rejection."""

from __future__ import annotations

import json

import pytest
import yaml

from inference_infra.components.aws import GpuFleet, GpuFleetArgs
from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.capacity import (
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
)
from inference_infra.components.aws.fleet_args import EfsAttachment, S3Weights
from inference_infra.components.aws.launch import MANAGED_INSTANCE_CORE_ACTIONS
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.offline_plan.pricing import price_capture

PIN = "ab" * 32  # a pinned manifest digest

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"
CAPACITY_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"


def _p5(fleet_args, **overrides):
    values = {
        "instance_type": "p5.48xlarge",
        "spot": 0,
        "reserved": 2,
        "on_demand": 1,
        "reservation": NewCapacityReservation(availability_zone="us-east-1b", instance_count=2),
    }
    return fleet_args(GpuFleetArgs, **{**values, **overrides})


def test_gpu_fleet_launch_template_is_secure_by_default(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs)))
    template = capture.one(TEMPLATE).props
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["metadataOptions"]["httpPutResponseHopLimit"] == 1
    root = template["blockDeviceMappings"][0]["ebs"]
    assert (root["encrypted"], root["volumeType"], root["volumeSize"]) == ("true", "gp3", 200)
    assert template["monitoring"] == {"enabled": True}
    assert template["imageId"] == (
        "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-amazon-linux-2023/latest/ami-id"
    )
    for instance in capture.of_type(INSTANCE):
        assert instance.props["associatePublicIpAddress"] is False
        assert instance.props["launchTemplate"]["id"] == capture.one(TEMPLATE).id


def test_gpu_fleet_ami_override_pins_the_image(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs, ami_id="ami-0123456789abcdef0")))
    assert capture.one(TEMPLATE).props["imageId"] == "ami-0123456789abcdef0"


def test_gpu_fleet_reserved_instances_target_the_reservation(plan_of, fleet_args):
    capture = plan_of(GpuFleet("llama", _p5(fleet_args)))
    reservation = capture.one(RESERVATION)
    assert reservation.props["instanceMatchCriteria"] == "targeted"
    assert (reservation.props["instanceCount"], reservation.props["availabilityZone"]) == (2, "us-east-1b")
    reserved = [i for i in capture.of_type(INSTANCE) if i.props["tags"]["Purchase"] == "reserved"]
    assert len(reserved) == 2
    for instance in reserved:
        target = instance.props["capacityReservationSpecification"]["capacityReservationTarget"]
        assert target["capacityReservationId"] == reservation.id
        assert instance.props["availabilityZone"] == "us-east-1b"
        assert instance.props["subnetId"] == "subnet-0b"
    on_demand = capture.one(INSTANCE, "llama-ondemand-0").props
    assert on_demand["capacityReservationSpecification"] == {"capacityReservationPreference": "none"}


def test_gpu_fleet_prices_the_reservation_in_full_and_its_instances_at_zero(plan_of, fleet_args):
    capture = plan_of(GpuFleet("llama", _p5(fleet_args)))
    report = price_capture(capture)
    by_name = {
        item.urn.rsplit("::", 1)[-1]: item.hourly_usd
        for item in report.items
        if item.category == "accelerator"
    }
    assert by_name["llama-reservation"] == pytest.approx(2 * 55.04)
    assert by_name["llama-reserved-0"] == by_name["llama-reserved-1"] == 0.0
    assert by_name["llama-ondemand-0"] == pytest.approx(55.04)


def test_gpu_fleet_spot_instances_are_persistent_and_stop_on_interruption(plan_of, fleet_args):
    capture = plan_of(GpuFleet("batch", fleet_args(GpuFleetArgs, spot=2)))
    for instance in capture.of_type(INSTANCE):
        market = instance.props["instanceMarketOptions"]
        assert market["marketType"] == "spot"
        assert market["spotOptions"] == {
            "instanceInterruptionBehavior": "stop",
            "spotInstanceType": "persistent",
        }
    assert {i.props["availabilityZone"] for i in capture.of_type(INSTANCE)} == {"us-east-1a", "us-east-1b"}


def test_gpu_fleet_spot_diversification_keeps_each_instance_type_explicit(plan_of, fleet_args):
    args = fleet_args(GpuFleetArgs, instance_type="g6e.2xlarge", spot=4, spot_instance_types=["g6e.4xlarge"])
    capture = plan_of(GpuFleet("small", args))
    types = sorted(i.props["instanceType"] for i in capture.of_type(INSTANCE))
    assert types == ["g6e.2xlarge", "g6e.2xlarge", "g6e.4xlarge", "g6e.4xlarge"]
    report = price_capture(capture)
    # each type at its own dated spot row's highest us-east-1 zone: g6e.2xlarge $1.0895/h,
    # g6e.4xlarge $1.1536/h
    assert report.accelerators_hourly_usd == pytest.approx(2 * 1.0895 + 2 * 1.1536, abs=0.01)


def test_gpu_fleet_count_follows_the_fallback_order(plan_of, fleet_args):
    args = _p5(fleet_args, reserved=0, on_demand=0, count=4, max_spot=1)
    capture = plan_of(GpuFleet("llama", args))
    purchases = sorted(i.props["tags"]["Purchase"] for i in capture.of_type(INSTANCE))
    assert purchases == ["on-demand", "reserved", "reserved", "spot"]


def test_gpu_fleet_security_group_opens_only_named_sources(plan_of, fleet_args):
    args = fleet_args(
        GpuFleetArgs,
        client_security_group_ids=["sg-0lb"],
        monitoring_security_group_ids=["sg-0prom"],
    )
    capture = plan_of(GpuFleet("serving", args))
    rules = {
        (r.props["fromPort"], r.props.get("referencedSecurityGroupId") or r.props.get("cidrIpv4"))
        for r in capture.of_type(INGRESS)
    }
    assert rules == {(8000, "sg-0lb"), (9400, "sg-0prom"), (9100, "sg-0prom")}  # no engines: no /metrics
    egress = capture.one("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule").props
    assert (egress["fromPort"], egress["toPort"], egress["cidrIpv4"]) == (443, 443, "0.0.0.0/0")


def test_gpu_fleet_with_no_callers_opens_no_ingress(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs)))
    assert capture.of_type(INGRESS) == []


def test_gpu_fleet_role_is_least_privilege(plan_of, fleet_args):
    args = fleet_args(
        GpuFleetArgs,
        weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN),
    )
    capture = plan_of(GpuFleet("serving", args))
    policy = json.loads(capture.one("aws:iam/rolePolicy:RolePolicy", "serving-node").props["policy"])
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["CloudWatchAgentMetrics"]["Condition"] == {
        "StringEquals": {"cloudwatch:namespace": ["CWAgent", "InferenceInfra"]}  # + the prefetch's metric
    }
    assert statements["ReadModelWeights"] == {
        "Sid": "ReadModelWeights",
        "Effect": "Allow",
        "Action": "s3:GetObject",
        "Resource": "arn:aws:s3:::acme-models/meta-llama/70b/*",
    }
    assert statements["ListModelPrefix"]["Condition"] == {
        "StringLike": {"s3:prefix": ["meta-llama/70b", "meta-llama/70b/*"]}
    }
    assert capture.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") == []
    ssm = json.loads(
        next(p for p in capture.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("-ssm")).props[
            "policy"
        ]
    )
    by_sid = {s["Sid"]: s for s in ssm["Statement"]}
    assert "ssmmessages:OpenDataChannel" in by_sid["SessionManager"]["Action"]
    assert not any(a.startswith("ssm:GetParameter") for a in by_sid["SessionManager"]["Action"])
    # everything else the managed policy grants the agent (associations, inventory, Run Command) stays
    managed = set(MANAGED_INSTANCE_CORE_ACTIONS) - {"ssm:GetParameter", "ssm:GetParameters"}
    assert set(by_sid["SessionManager"]["Action"]) == managed
    assert len(MANAGED_INSTANCE_CORE_ACTIONS) == 25
    # the stack's own region and account (the mock's), never `*:*`: a same-named parameter elsewhere
    # is not read
    assert by_sid["FleetParameters"]["Resource"].startswith(
        "arn:aws:ssm:us-east-1:123456789012:parameter/inference-infra/"
    )
    assert by_sid["FleetParameters"]["Resource"].endswith("/*")
    assume = json.loads(capture.one("aws:iam/role:Role").props["assumeRolePolicy"])
    assert assume["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}


def test_gpu_fleet_user_data_prefetches_the_model_and_mounts_efs(plan_of, fleet_args):
    efs = EfsAttachment(
        file_system_id="fs-0abc",
        file_system_arn="arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0abc",
        access_point_id="fsap-0abc",
        access_point_arn="arn:aws:elasticfilesystem:us-east-1:123456789012:access-point/fsap-0abc",
        client_security_group_id="sg-0efsclients",
    )
    args = _p5(
        fleet_args,
        efs=efs,
        weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN),
    )
    capture = plan_of(GpuFleet("llama", args))
    template = capture.one(TEMPLATE).props
    user_data = decode_user_data(template["userData"])
    document = yaml.safe_load(user_data)
    assert document["mounts"][1][:3] == ["fs-0abc:/", "/mnt/efs-models", "efs"]
    units = {f["path"]: f["content"] for f in document["write_files"]}
    assert "nvme-cache.sh /opt/models 8" in units["/etc/systemd/system/inference-nvme-cache.service"]
    assert "s3://acme-models/meta-llama/70b" in units["/etc/systemd/system/inference-model-prefetch.service"]
    assert "sg-0efsclients" in template["vpcSecurityGroupIds"]
    policy = json.loads(capture.one("aws:iam/rolePolicy:RolePolicy", "llama-node").props["policy"])
    mount = next(s for s in policy["Statement"] if s["Sid"] == "MountModelCache")
    assert mount["Action"] == ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
    assert mount["Condition"]["StringEquals"]["elasticfilesystem:AccessPointArn"].endswith("fsap-0abc")


@pytest.mark.parametrize(("setting", "tag"), [(True, "true"), (False, "false")])
def test_gpu_fleet_sets_auto_shutdown_from_the_fleet(plan_of, tagged, fleet_args, setting, tag):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs, auto_shutdown=setting)))
    assert capture.one(INSTANCE).props["tags"]["AutoShutdown"] == tag


def test_gpu_fleet_without_auto_shutdown_leaves_the_stack_default(plan_of, tagged, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs)))
    tags = capture.one(INSTANCE).props["tags"]
    assert tags["AutoShutdown"] == "true"  # TEST_TAGS: auto_shutdown=True, applied by the stack transform
    assert tags["CostCenter"] == "ml-platform"
    assert (tags["Name"], tags["Pool"], tags["Purchase"]) == ("serving-spot-0", "serving", "spot")


def test_gpu_fleet_exposes_its_outputs(plan_of, fleet_args):
    fleet = GpuFleet("llama", _p5(fleet_args))
    capture = plan_of(fleet)
    component = capture.one("inference-infra:aws:GpuFleet")
    assert component.custom is False
    assert fleet.instance_types == ["p5.48xlarge"] * 3
    outputs = capture.one("inference-infra:aws:GpuFleet").outputs
    assert len(outputs["instance_ids"]) == 3
    assert all(i.startswith("i-") for i in outputs["instance_ids"])
    assert outputs["reservation_id"] == capture.one(RESERVATION).id
    assert outputs["security_group_id"].startswith("sg-")


def test_gpu_fleet_existing_reservation_is_used_not_created(plan_of, fleet_args):
    reservation = ExistingCapacityReservation(
        id="cr-0existing", instance_type="p5.48xlarge", availability_zone="us-east-1a", instance_count=4
    )
    capture = plan_of(GpuFleet("llama", _p5(fleet_args, reservation=reservation)))
    assert capture.of_type(RESERVATION) == []
    target = capture.one(INSTANCE, "llama-reserved-0").props["capacityReservationSpecification"]
    assert target["capacityReservationTarget"]["capacityReservationId"] == "cr-0existing"


def _block(**overrides) -> CapacityBlock:
    values = {
        "availability_zone": "us-east-1a",
        "instance_count": 2,
        "duration_hours": 72,
        "start_date_range": "2026-12-01T00:00:00Z",
        "end_date_range": "2026-12-15T00:00:00Z",
    }
    return CapacityBlock(**{**values, **overrides})


def test_gpu_fleet_capacity_block_is_only_looked_up_without_purchase(plan_of, fleet_args):
    args = _p5(fleet_args, reserved=0, reservation=_block())
    fleet = GpuFleet("burst", args)
    capture = plan_of(fleet)
    assert capture.of_type(CAPACITY_BLOCK) == []
    assert fleet.reservation_id is None
    assert "aws:ec2/getCapacityBlockOffering:getCapacityBlockOffering" in capture.invokes


def test_gpu_fleet_capacity_block_purchase_is_protected(plan_of, fleet_args):
    capture = plan_of(GpuFleet("burst", _p5(fleet_args, on_demand=0, reservation=_block(purchase=True))))
    block = capture.one(CAPACITY_BLOCK)
    assert block.protect is True
    assert block.props["instancePlatform"] == "Linux/UNIX"
    for instance in capture.of_type(INSTANCE):
        assert instance.props["instanceMarketOptions"] == {"marketType": "capacity-block"}
        target = instance.props["capacityReservationSpecification"]["capacityReservationTarget"]
        assert target["capacityReservationId"] == block.id


# -- rejections: every one names the input, the value and what is allowed ------------------------


def test_gpu_fleet_rejects_cpu_instance_type_naming_close_matches(plan_of, fleet_args):
    with pytest.raises(
        InputError,
        match=r"instance_type 'g5.xlarg' has no NVIDIA GPU in the catalog; close matches: g5.xlarge",
    ):
        GpuFleet("serving", fleet_args(GpuFleetArgs, instance_type="g5.xlarg"))
    with pytest.raises(InputError, match=r"instance_type 'm5.large' has no NVIDIA GPU in the catalog"):
        GpuFleet("serving", fleet_args(GpuFleetArgs, instance_type="m5.large"))
    assert plan_of().of_type(INSTANCE) == []  # nothing registered


def test_gpu_fleet_rejects_inferentia_instance_type(fleet_args):
    with pytest.raises(
        InputError, match=r"instance_type 'inf2.xlarge' carries AWS Neuron .* use InferentiaFleet"
    ):
        GpuFleet("serving", fleet_args(GpuFleetArgs, instance_type="inf2.xlarge"))


def test_gpu_fleet_rejects_reserved_count_larger_than_the_reservation(fleet_args):
    with pytest.raises(InputError, match=r"reserved 3 is more than the reservation's 2 instances"):
        GpuFleet("llama", _p5(fleet_args, reserved=3))


def test_gpu_fleet_rejects_reservation_zone_without_a_subnet(fleet_args):
    reservation = NewCapacityReservation(availability_zone="us-east-1d", instance_count=2)
    with pytest.raises(
        InputError, match=r"reservation.availability_zone 'us-east-1d' has no subnet in the fleet"
    ):
        GpuFleet("llama", _p5(fleet_args, reservation=reservation))


def test_gpu_fleet_rejects_capacity_block_purchase_without_the_flag(plan_of, fleet_args):
    with pytest.raises(InputError, match=r"reservation.purchase False must be True to launch 2 reserved"):
        GpuFleet("burst", _p5(fleet_args, reservation=_block()))
    assert plan_of().of_type(CAPACITY_BLOCK) == []


def test_gpu_fleet_rejects_capacity_block_only_types_outside_a_capacity_block(fleet_args):
    with pytest.raises(
        InputError,
        match=r"instance_type 'p5e.48xlarge' is sold through EC2 Capacity Blocks only: .*"
        r"\(spot and on-demand cannot be filled\)",
    ):
        GpuFleet("h200", _p5(fleet_args, instance_type="p5e.48xlarge"))
    with pytest.raises(
        InputError, match=r"reservation 'NewCapacityReservation' is sold through EC2 Capacity"
    ):
        GpuFleet("h200", _p5(fleet_args, instance_type="p5e.48xlarge", on_demand=0))


def test_gpu_fleet_accepts_capacity_block_only_types_in_a_purchased_block(plan_of, fleet_args):
    args = _p5(fleet_args, instance_type="p5e.48xlarge", on_demand=0, reservation=_block(purchase=True))
    capture = plan_of(GpuFleet("h200", args))
    assert {r.props["instanceType"] for r in capture.of_type("aws:ec2/instance:Instance")} == {"p5e.48xlarge"}


def test_gpu_fleet_rejects_reserved_without_a_reservation(fleet_args):
    with pytest.raises(InputError, match=r"reserved 2 needs a reservation"):
        GpuFleet("llama", _p5(fleet_args, reservation=None))


def test_gpu_fleet_rejects_spot_types_with_less_memory(fleet_args):
    args = fleet_args(GpuFleetArgs, instance_type="g6e.xlarge", spot=2, spot_instance_types=["g5.xlarge"])
    with pytest.raises(
        InputError, match=r"spot_instance_types\[0\] 'g5.xlarge' has 24 GiB .* less than g6e.xlarge's 48"
    ):
        GpuFleet("small", args)


def test_gpu_fleet_rejects_client_cidr_blocks_only_a_load_balancer_reaches_the_api(fleet_args):
    with pytest.raises(
        InputError, match=r"client_cidr_blocks \['10.0.0.0/8'\] are refused: only a load balancer"
    ):
        GpuFleet("serving", fleet_args(GpuFleetArgs, client_cidr_blocks=["10.0.0.0/8"]))


def test_gpu_fleet_rejects_count_the_order_cannot_place(fleet_args):
    args = fleet_args(GpuFleetArgs, spot=0, count=3, max_spot=1, capacity_order=[CapacityMode.SPOT])
    with pytest.raises(InputError, match=r"count 3 leaves 2 machine\(s\) unplaced in the order spot"):
        GpuFleet("serving", args)


def test_gpu_fleet_reports_every_problem_at_once(fleet_args):
    args = fleet_args(GpuFleetArgs, instance_type="m5.large", spot=-1, root_volume_gib=10, serving_port=9400)
    with pytest.raises(InputError) as raised:
        GpuFleet("serving", args)
    inputs = {p.input for p in raised.value.problems}
    assert {"instance_type", "spot", "root_volume_gib", "serving_port"} <= inputs
    assert str(raised.value).startswith("GpuFleet 'serving': ")


# -- the previous release's input names: each warns, naming the new one, and still works ---------------


def _ingress(capture) -> set[tuple[int, str]]:
    return {
        (r.props["fromPort"], r.props.get("referencedSecurityGroupId") or r.props.get("cidrIpv4"))
        for r in capture.of_type(INGRESS)
    }


def test_gpu_fleet_old_inference_port_warns_and_sets_serving_port(plan_of, fleet_args):
    with pytest.warns(
        DeprecationWarning, match=r"GpuFleetArgs\(inference_port=\.\.\.\) is deprecated.*use serving_port"
    ):
        args = fleet_args(GpuFleetArgs, inference_port=9000, client_security_group_ids=["sg-0lb"])
    assert args.serving_port == 9000
    assert _ingress(plan_of(GpuFleet("serving", args))) == {(9000, "sg-0lb")}


def test_gpu_fleet_old_inference_callers_warn_and_set_the_client_inputs(plan_of, fleet_args):
    with pytest.warns(DeprecationWarning, match="is deprecated") as warned:
        args = fleet_args(
            GpuFleetArgs, inference_security_group_ids=["sg-0lb"], inference_cidr_blocks=["10.20.0.0/16"]
        )
    messages = {str(w.message) for w in warned}
    assert any("use client_security_group_ids" in m for m in messages)
    assert any("use client_cidr_blocks" in m for m in messages)
    assert (args.client_security_group_ids, args.client_cidr_blocks) == (["sg-0lb"], ["10.20.0.0/16"])
    with pytest.raises(InputError, match="only a load balancer reaches"):
        GpuFleet("serving", args)


def test_gpu_fleet_old_extra_tags_warn_and_set_tags(plan_of, fleet_args):
    with pytest.warns(DeprecationWarning, match=r"extra_tags=\.\.\.\) is deprecated.*use tags"):
        args = fleet_args(GpuFleetArgs, extra_tags={"Team": "llm"})
    capture = plan_of(GpuFleet("serving", args))
    assert capture.one(INSTANCE).props["tags"]["Team"] == "llm"
    assert capture.one(TEMPLATE).props["tags"]["Team"] == "llm"


def test_gpu_fleet_old_root_volume_kms_key_id_warns_and_sets_kms_key(plan_of, fleet_args):
    key = "arn:aws:kms:us-east-1:123456789012:key/abc"
    with pytest.warns(
        DeprecationWarning, match=r"root_volume_kms_key_id=\.\.\.\) is deprecated.*use kms_key"
    ):
        args = fleet_args(GpuFleetArgs, root_volume_kms_key_id=key)
    assert args.kms_key == key
    ebs = plan_of(GpuFleet("serving", args)).one(TEMPLATE).props["blockDeviceMappings"][0]["ebs"]
    assert ebs["kmsKeyId"] == key


def test_gpu_fleet_kms_key_encrypts_the_root_volume(plan_of, fleet_args):
    key = "arn:aws:kms:us-east-1:123456789012:key/abc"
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs, kms_key=key)))
    assert capture.one(TEMPLATE).props["blockDeviceMappings"][0]["ebs"]["kmsKeyId"] == key


def test_gpu_fleet_old_model_source_warns_and_sets_weights(plan_of, fleet_args):
    with pytest.warns(DeprecationWarning, match=r"ModelSource is deprecated .* use S3Weights"):
        from inference_infra.components.aws import ModelSource
    with pytest.warns(DeprecationWarning, match=r"model=ModelSource\(\.\.\.\)\) is deprecated.*use weights="):
        args = fleet_args(
            GpuFleetArgs,
            model=ModelSource(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN),
        )
    assert (args.model, args.weights) == (
        None,
        S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN),
    )
    capture = plan_of(GpuFleet("serving", args))
    policy = json.loads(capture.one("aws:iam/rolePolicy:RolePolicy", "serving-node").props["policy"])
    assert "ReadModelWeights" in {s["Sid"] for s in policy["Statement"]}


def test_gpu_fleet_old_attribute_names_warn_and_read_the_new_inputs(fleet_args):
    args = fleet_args(GpuFleetArgs, serving_port=9000, tags={"Team": "llm"})
    with pytest.warns(
        DeprecationWarning, match=r"GpuFleetArgs.inference_port is deprecated; use serving_port"
    ):
        assert args.inference_port == 9000
    with pytest.warns(DeprecationWarning, match=r"use tags"):
        assert args.extra_tags == {"Team": "llm"}


def test_gpu_fleet_rejects_an_old_and_a_new_name_together(fleet_args):
    with pytest.raises(TypeError, match=r"'inference_port' is the old name of 'serving_port'"):
        fleet_args(GpuFleetArgs, inference_port=9000, serving_port=9001)
    weights = S3Weights(bucket_name="acme-models", prefix="m", manifest_sha256=PIN)
    with pytest.raises(TypeError, match=r"model=ModelSource\(\.\.\.\) is the old name of weights="):
        fleet_args(GpuFleetArgs, model=weights, weights=weights)


def test_gpu_fleet_old_capacity_enum_still_orders_the_pool(plan_of, fleet_args):
    with pytest.warns(DeprecationWarning, match=r"Capacity is deprecated .* use CapacityMode"):
        from inference_infra.components.aws.capacity import Capacity
    args = fleet_args(
        GpuFleetArgs, spot=0, count=2, max_spot=1, capacity_order=[Capacity.SPOT, Capacity.ON_DEMAND]
    )
    capture = plan_of(GpuFleet("serving", args))
    assert sorted(i.props["tags"]["Purchase"] for i in capture.of_type(INSTANCE)) == ["on-demand", "spot"]


@pytest.mark.parametrize("name", ["a b", "serving\nx", "llama%n"])
def test_gpu_fleet_refuses_a_name_the_nodes_cannot_carry_once(fleet_args, name):
    """#32 item 8: the plain-name check is the AWS profile's (input_problems): the fleet plans with its
    own name and the name is one problem, whatever else the plan finds."""
    with pytest.raises(InputError) as raised:
        GpuFleet(name, fleet_args(GpuFleetArgs, spot=-1))
    inputs = [p.input for p in raised.value.problems]
    assert inputs.count("name") == 1
    assert "spot" in inputs
