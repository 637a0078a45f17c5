"""EksNodeGroups: a managed node group per capacity mode, each with its own hardened launch template.

Values held against the pinned sources (read 2026-12-02):
- the EKS API's enums in botocore 1.44.8 (data/eks/2017-11-01): AMITypes has AL2023_x86_64_NVIDIA
  and AL2023_x86_64_NEURON, CapacityTypes ON_DEMAND/SPOT/CAPACITY_BLOCK, TaintEffect NO_SCHEDULE/...;
  EC2's MarketType has capacity-block and HttpTokensState required (checked in the first tests);
- Capacity Blocks with managed node groups: a launch template with InstanceMarketOptions.MarketType
  capacity-block and the block's CapacityReservationTarget, capacity type CAPACITY_BLOCK (EKS user
  guide, capacity-blocks-mng);
- terraform-provider-aws's aws_eks_node_group schema (internal/service/eks/node_group.go, read through
  GitHub code search 2026-12-02): capacity_type and taint.effect validated by the SDK's enums, taint key
  1-63 and value 0-63 characters (at most 50 taints), scaling_config min_size/desired_size >= 0 and
  max_size >= 1, launch_template id or name with a required version, update_config max_unavailable
  1-100;
- the node role's policies: AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryPullOnly, and
  AmazonEKS_CNI_Policy unless the CNI has its own role (EKS user guide, create-node-role).
"""

from __future__ import annotations

import json

import botocore.session
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s.node_capacity import EksNodeGroups
from inference_infra.components.k8s.node_capacity_args import (
    EKS_AMI_TYPES,
    EKS_CAPACITY_TYPES,
    EKS_TAINT_EFFECTS,
    EksNodeGroupsArgs,
    EksReservation,
    NodeSubnet,
)
from tests.components.k8s.node_cases import eks_args

GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNETS = [
    NodeSubnet(id="subnet-0a", availability_zone="us-east-1a"),
    NodeSubnet(id="subnet-0b", availability_zone="us-east-1b"),
]


def _args(**kw) -> EksNodeGroupsArgs:
    return eks_args(**{"on_demand": 2, "subnets": SUBNETS, **kw})


def test_eks_enums_match_the_eks_api_in_botocore():
    session = botocore.session.get_session()
    eks = session.get_service_model("eks")
    assert set(EKS_AMI_TYPES.values()) <= set(eks.shape_for("AMITypes").enum)
    assert set(EKS_CAPACITY_TYPES) == set(eks.shape_for("CapacityTypes").enum)
    assert set(EKS_TAINT_EFFECTS.values()) == set(eks.shape_for("TaintEffect").enum)
    ec2 = session.get_service_model("ec2")
    assert "capacity-block" in ec2.shape_for("MarketType").enum
    assert "required" in ec2.shape_for("HttpTokensState").enum


def test_eks_node_groups_launch_template_is_imdsv2_hop_limit_1_encrypted_gp3(plan_of):
    capture = plan_of(
        EksNodeGroups("chat-nodes", _args(kms_key_arn="arn:aws:kms:us-east-1:123456789012:key/abc"))
    )
    template = capture.one(TEMPLATE).props
    assert template["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
    }
    [root] = template["blockDeviceMappings"]
    assert root["deviceName"] == "/dev/xvda"
    assert root["ebs"]["volumeType"] == "gp3"
    assert root["ebs"]["encrypted"] == "true"
    assert root["ebs"]["kmsKeyId"] == "arn:aws:kms:us-east-1:123456789012:key/abc"
    assert root["ebs"]["volumeSize"] == 200
    assert template["instanceType"] == "g6e.xlarge"
    # no public IP whatever the subnet says; the cluster security group on the interface
    assert template["networkInterfaces"] == [
        {
            "deviceIndex": 0,
            "associatePublicIpAddress": "false",
            "deleteOnTermination": "true",
            "securityGroups": ["sg-0123456789abcdef0"],
        }
    ]
    assert "capacityReservationSpecification" not in template


def test_eks_node_groups_carry_the_pools_labels_and_taints(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args()))
    group = capture.one(GROUP).props
    assert group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group["capacityType"] == "ON_DEMAND"
    assert group["labels"] == {
        "inference-infra.dev/pool": "chat",
        "inference-infra.dev/accelerator-family": "nvidia-gpu",
        "inference-infra.dev/capacity": "on-demand",
    }
    assert group["taints"] == [
        {"key": "inference-infra.dev/pool", "value": "chat", "effect": "NO_SCHEDULE"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
    ]
    assert group["scalingConfig"] == {"minSize": 2, "desiredSize": 2, "maxSize": 2}
    assert group["subnetIds"] == ["subnet-0a", "subnet-0b"]
    assert "instanceTypes" not in group  # the launch template names the type
    assert group["launchTemplate"]["version"] == "1"


def test_eks_node_groups_meet_the_providers_schema_bounds(plan_of):
    pool = "p" * 63  # the longest pool name: a taint value and label value still fit
    capture = plan_of(EksNodeGroups("long", _args(pool=pool, on_demand=1, spot=1, min_nodes=0)))
    for group in capture.of_type(GROUP):
        props = group.props
        assert len(props["taints"]) <= 50
        assert all(1 <= len(t["key"]) <= 63 and len(t["value"]) <= 63 for t in props["taints"])
        scaling = props["scalingConfig"]
        assert min(scaling["minSize"], scaling["desiredSize"]) >= 0
        assert scaling["maxSize"] >= 1
        assert 1 <= props["updateConfig"]["maxUnavailable"] <= 100
        assert props["launchTemplate"]["id"]
        assert props["launchTemplate"]["version"]


def test_eks_node_groups_neuron_pool_uses_the_neuron_ami_and_taint(plan_of):
    capture = plan_of(EksNodeGroups("inf", _args(instance_type="inf2.xlarge")))
    group = capture.one(GROUP).props
    assert group["amiType"] == "AL2023_x86_64_NEURON"
    assert {"key": "aws.amazon.com/neuron", "value": "present", "effect": "NO_SCHEDULE"} in group["taints"]


def test_eks_node_groups_one_group_per_capacity_mode_with_its_scaling(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args(on_demand=1, spot=3, min_nodes=0, max_nodes=6)))
    groups = {g.name: g.props for g in capture.of_type(GROUP)}
    assert set(groups) == {"chat-nodes-ondemand", "chat-nodes-spot"}
    assert groups["chat-nodes-spot"]["capacityType"] == "SPOT"
    assert groups["chat-nodes-spot"]["scalingConfig"] == {"minSize": 0, "desiredSize": 3, "maxSize": 6}
    assert groups["chat-nodes-ondemand"]["scalingConfig"] == {"minSize": 0, "desiredSize": 1, "maxSize": 6}
    assert len(capture.of_type(TEMPLATE)) == 2


def test_eks_node_groups_reserved_nodes_target_the_reservation_in_its_zone(plan_of):
    reservation = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1b")
    capture = plan_of(EksNodeGroups("chat-nodes", _args(on_demand=0, reserved=2, reservation=reservation)))
    group = capture.one(GROUP).props
    assert group["capacityType"] == "ON_DEMAND"
    assert group["subnetIds"] == ["subnet-0b"]
    template = capture.one(TEMPLATE).props
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    assert "instanceMarketOptions" not in template


def test_eks_node_groups_reservation_arn_becomes_its_id(plan_of):
    arn = "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0123456789abcdef0"
    reservation = EksReservation(target=arn, availability_zone="us-east-1a")
    capture = plan_of(EksNodeGroups("n", _args(on_demand=0, reserved=1, reservation=reservation)))
    target = capture.one(TEMPLATE).props["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationId": "cr-0123456789abcdef0"}


def test_eks_node_groups_capacity_block_uses_capacity_block_market_and_type(plan_of):
    block = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True)
    args = _args(instance_type="p5.48xlarge", on_demand=0, reserved=2, min_nodes=0, reservation=block)
    capture = plan_of(EksNodeGroups("train", args))
    group = capture.one(GROUP).props
    assert group["capacityType"] == "CAPACITY_BLOCK"
    assert group["subnetIds"] == ["subnet-0a"]
    template = capture.one(TEMPLATE).props
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["instanceType"] == "p5.48xlarge"


def test_eks_node_groups_creates_a_least_privilege_node_role(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args()))
    role = capture.one("aws:iam/role:Role").props
    trust = json.loads(role["assumeRolePolicy"])
    assert trust["Statement"] == [
        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ]
    arns = sorted(
        a.props["policyArn"] for a in capture.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    )
    assert arns == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]


def test_eks_node_groups_without_cni_policy_and_with_a_given_role(plan_of):
    capture = plan_of(EksNodeGroups("a", _args(cni_policy=False)))
    arns = [
        a.props["policyArn"] for a in capture.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    ]
    assert not any("CNI" in arn for arn in arns)
    given = "arn:aws:iam::123456789012:role/eks-nodes"
    capture = plan_of(EksNodeGroups("b", _args(node_role_arn=given)))
    assert capture.one(GROUP, "b-ondemand").props["nodeRoleArn"] == given
    assert [r for r in capture.of_type("aws:iam/role:Role") if r.name.startswith("b-")] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pool": "Chat_Pool"}, "pool 'Chat_Pool' must be a DNS label"),
        ({"instance_type": "m5.large"}, "instance_type 'm5.large' is not an accelerator instance type"),
        (
            {"instance_type": "a3-highgpu-8g"},
            "instance_type 'a3-highgpu-8g' is not an accelerator instance type",
        ),
        ({"on_demand": 0}, "on_demand + spot + reserved 0 must be at least 1"),
        ({"on_demand": 3, "max_nodes": 2}, "must bound the on-demand group's desired size 3"),
        ({"on_demand": 1, "min_nodes": 2}, "must bound the on-demand group's desired size 1"),
        ({"subnets": []}, "subnets [] must list at least one private subnet"),
        (
            {"subnets": [NodeSubnet(id="subnet-0p", availability_zone="us-east-1a", public=True)]},
            "subnets[0].public True is refused: accelerator nodes launch in private subnets only",
        ),
        (
            {"subnets": [NodeSubnet(id="subnet-0a", availability_zone="east")]},
            "subnets[0].availability_zone 'east'",
        ),
        ({"on_demand": 0, "reserved": 1}, "reserved 1 needs reservation"),
        (
            {"reservation": EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a")},
            "reservation 'cr-0123456789abcdef0' is given but reserved is 0",
        ),
        (
            {"reserved": 1, "reservation": EksReservation(target="res-1", availability_zone="us-east-1a")},
            "reservation.target 'res-1' must be a capacity reservation id",
        ),
        (
            {
                "reserved": 1,
                "reservation": EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1c"),
            },
            "reservation.availability_zone 'us-east-1c' has no subnet among the pool's",
        ),
        (
            {
                "reserved": 1,
                "reservation": EksReservation(
                    target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True
                ),
            },
            "instance_type 'g6e.xlarge' is not sold as a Capacity Block",
        ),
        ({"kms_key_arn": "alias/mine"}, "kms_key_arn 'alias/mine' must be a KMS key or alias ARN"),
        ({"node_role_arn": "eks-nodes"}, "node_role_arn 'eks-nodes' must be an IAM role ARN"),
        ({"on_demand": 5000}, "on_demand 5000 must be 0..1000"),
        ({"security_group_ids": []}, "security_group_ids [] must name at least the cluster security group"),
        ({"security_group_ids": ["default"]}, "security_group_ids[0] 'default' must be a security group id"),
    ],
)
def test_eks_node_groups_rejects_bad_input_before_registering(plan_of, change, message):
    with pytest.raises(InputError, match=None) as raised:
        EksNodeGroups("bad", _args(**change))
    assert message in str(raised.value)
    assert [r for r in plan_of() if r.name.startswith("bad")] == []


def test_eks_node_groups_outputs_name_each_group(plan_of, harness):
    component = EksNodeGroups("chat-nodes", _args(on_demand=1, spot=1))
    seen: list = []
    harness.in_loop(lambda: component.node_group_names.apply(seen.append))
    harness.in_loop(lambda: component.node_groups[1].arn.apply(seen.append))
    plan_of()
    [names] = [v for v in seen if isinstance(v, list)]
    [arn] = [v for v in seen if isinstance(v, str)]
    assert len(names) == 2
    assert all(n.startswith("chat-nodes-") for n in names)
    # the offline mock's shape of DescribeNodegroup's nodegroupArn
    assert arn.startswith("arn:aws:eks:us-east-1:123456789012:nodegroup/inference/chat-nodes-spot-")
    assert arn.split("/")[2] in names


def test_eks_node_groups_rejects_a_name_its_role_name_cannot_hold(plan_of):
    with pytest.raises(InputError) as raised:
        EksNodeGroups("Chat", _args())
    assert "name 'Chat' must be 1-46 of a-z" in str(raised.value)
