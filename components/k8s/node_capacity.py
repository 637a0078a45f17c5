"""The accelerator nodes of a Kubernetes serving pool: EKS managed node groups, Karpenter, GKE node pools.

Each component gives one serving pool its own nodes, labelled and tainted by the pool's scheduling
contract (`scheduling.py`), so the pool's pods land only there and nothing else does:

- `EksNodeGroups`: a managed node group per capacity mode with nodes (on-demand, spot, reserved),
  each with its own launch template: IMDSv2 required with a hop limit of 1 (a pod cannot reach the
  instance role's credentials), an encrypted gp3 root volume, the instance type from the plan, the
  accelerator AMI type, and for reserved nodes the capacity reservation or Capacity Block. Private
  subnets only; the node role is given or created with the managed policies EKS documents.
- `KarpenterNodes`: a `karpenter.sh/v1` NodePool + `karpenter.k8s.aws/v1` EC2NodeClass (Karpenter
  1.14.1's CRDs): the plan's instance type and its alternatives, the capacity types, an accelerator
  limit that bounds spend, consolidation and expiry, IMDSv2 hop limit 1, an encrypted root volume.
- `GkeNodePool`: a GKE node pool of GPU machines (GKE installs the driver) or TPU machines (a
  multi-host slice with its COMPACT placement topology; a single-host slice by machine type alone),
  spot where asked, its own service account, Shielded nodes, Workload Identity's metadata server, no
  legacy metadata endpoints, autoscaling bounds, reservations.

Every input is checked before anything is registered (`node_capacity_args.py`).
"""

from __future__ import annotations

import json

import pulumi

from inference_infra.components.catalog import AcceleratorFamily, Cloud, accelerator, find_instance_type
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity_args import (
    EKS_AMI_TYPES,
    EKS_TAINT_EFFECTS,
    GKE_NODE_ROLES,
    GKE_TAINT_EFFECTS,
    KARPENTER_CAPACITY_TYPES,
    EksNodeGroupsArgs,
    EksReservation,
    GkeNodePoolArgs,
    KarpenterNodesArgs,
    capacity_block_scaling,
    eks_capacity_type,
    eks_groups,
    gke_shape,
    group_instance_types,
    karpenter_limit,
    karpenter_types,
    name_problems,
    reservation_target,
    scaling,
    validate_eks_node_groups,
    validate_gke_node_pool,
    validate_karpenter_nodes,
)
from inference_infra.components.k8s.scheduling import (
    ACCELERATOR_RESOURCES,
    ACCELERATOR_TAINTS,
    node_labels,
    node_taints,
)
from inference_infra.components.tagging import AUTO_SHUTDOWN, bool_tag, registered_cost_tags
from inference_infra.components.validation import input_problems

__all__ = [
    "EKS_NODE_POLICIES",
    "EksNodeGroups",
    "EksNodeGroupsArgs",
    "GkeNodePool",
    "GkeNodePoolArgs",
    "KarpenterNodes",
    "KarpenterNodesArgs",
]

# The managed policies of the EKS node IAM role
# (docs.aws.amazon.com/eks/latest/userguide/create-node-role.html, read 2026-12-02): the kubelet's
# EC2 reads and Pod Identity, image pulls from ECR; the VPC CNI's policy only while the CNI has no
# role of its own.
EKS_NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
EKS_CNI_POLICY = "AmazonEKS_CNI_Policy"
ROOT_DEVICE = "/dev/xvda"  # the AL2023 EKS AMIs' root device


def _family(instance_type: str, cloud: Cloud) -> AcceleratorFamily:
    found = find_instance_type(instance_type, cloud)
    assert found is not None  # validated before
    return accelerator(found.accelerator).family


class EksNodeGroups(pulumi.ComponentResource):
    """EKS managed node groups for one serving pool (one per capacity mode with nodes)."""

    node_group_names: pulumi.Output[list[str]]
    node_role_arn: pulumi.Output[str]

    def __init__(self, name: str, args: EksNodeGroupsArgs, opts: pulumi.ResourceOptions | None = None):
        problems = name_problems(name, 46, "the node role is named <name>-node-role-<7 random>, 64 at most")
        raise_if_invalid(f"EksNodeGroups {name!r}", problems + input_problems(args, validate_eks_node_groups))
        super().__init__("inference-infra:k8s:EksNodeGroups", name, None, opts)
        import pulumi_aws as aws

        child = pulumi.ResourceOptions(parent=self)
        family = _family(args.instance_type, Cloud.AWS)
        role_arn = (
            args.node_role_arn if args.node_role_arn is not None else self._node_role(name, args, child)
        )
        labels = node_labels(args.pool, family)
        taints = [
            {"key": t.key, "value": t.value, "effect": EKS_TAINT_EFFECTS[t.effect]}
            for t in node_taints(args.pool, family)
        ]
        groups = []
        for mode, desired in eks_groups(args):
            suffix = mode.value.replace("-", "")
            reservation = args.reservation if mode is CapacityMode.RESERVED else None
            capacity_type = eks_capacity_type(mode, reservation)
            # Several types go on the node group, and then none in the template: EKS fails a group whose
            # template names a type while instanceTypes is set (CreateNodegroup, instanceTypes). One type
            # stays in the template, where a Capacity Block needs it (capacity-blocks-mng).
            types = group_instance_types(args, mode)
            template = aws.ec2.LaunchTemplate(
                f"{name}-{suffix}-lt",
                description=f"{args.pool} {mode.value} accelerator nodes: IMDSv2 hop limit 1, encrypted root",
                instance_type=types[0] if len(types) == 1 else None,
                metadata_options={
                    "http_endpoint": "enabled",
                    "http_tokens": "required",
                    "http_put_response_hop_limit": 1,
                },
                block_device_mappings=[
                    {
                        "device_name": ROOT_DEVICE,
                        "ebs": {
                            "volume_size": args.root_volume_gib,
                            "volume_type": "gp3",
                            "encrypted": "true",
                            "kms_key_id": args.kms_key_arn,
                            "delete_on_termination": "true",
                        },
                    }
                ],
                # An explicit interface so the node never gets a public IP, whatever the subnet's
                # mapPublicIpOnLaunch; once a template sets one, EKS needs its security groups there.
                network_interfaces=[
                    {
                        "device_index": 0,
                        "associate_public_ip_address": "false",
                        "delete_on_termination": "true",
                        "security_groups": list(args.security_group_ids),
                    }
                ],
                **_reservation_settings(reservation),
                tag_specifications=[
                    {"resource_type": "instance", "tags": _instance_tags(args.pool, len(types) > 1)},
                    {"resource_type": "volume", "tags": {"inference-infra.dev/pool": args.pool}},
                ],
                opts=child,
            )
            block = reservation is not None and capacity_type == "CAPACITY_BLOCK"
            low, want, high = (
                capacity_block_scaling(desired, reservation)
                if block and reservation is not None
                else scaling(desired, args.min_nodes, args.max_nodes)
            )
            subnets = [
                s.id
                for s in args.subnets
                if reservation is None or s.availability_zone == reservation.availability_zone
            ]
            group = aws.eks.NodeGroup(
                f"{name}-{suffix}",
                cluster_name=args.cluster_name,
                node_role_arn=role_arn,
                subnet_ids=subnets,
                ami_type=EKS_AMI_TYPES[family],
                capacity_type=capacity_type,
                instance_types=types if len(types) > 1 else None,
                scaling_config={"min_size": low, "desired_size": want, "max_size": high},
                launch_template={"id": template.id, "version": template.latest_version.apply(str)},
                labels={**labels, "inference-infra.dev/capacity": mode.value},
                taints=taints,
                update_config={"max_unavailable": 1},
                tags={"inference-infra.dev/pool": args.pool},
                # A group that scales (min < max) has its desired size set by the cluster's autoscaler
                # after creation; `pulumi up` must not reset it to the configured size. A Capacity Block
                # group's desired size is the stack's own (the block's nodes, or 0 to upgrade it).
                opts=pulumi.ResourceOptions(
                    parent=self,
                    ignore_changes=["scalingConfig.desiredSize"] if low < high and not block else None,
                ),
            )
            groups.append(group)
        self.node_groups = groups
        self.node_group_names = pulumi.Output.all(*[g.node_group_name for g in groups])
        self.node_role_arn = pulumi.Output.from_input(role_arn)
        self.register_outputs(
            {"node_group_names": self.node_group_names, "node_role_arn": self.node_role_arn}
        )

    def _node_role(
        self, name: str, args: EksNodeGroupsArgs, child: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        import pulumi_aws as aws

        role = aws.iam.Role(
            f"{name}-node-role",
            description=f"EKS nodes of serving pool {args.pool}",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "ec2.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            opts=child,
        )
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        policies = [*EKS_NODE_POLICIES, *([EKS_CNI_POLICY] if args.cni_policy else [])]
        for policy in policies:
            aws.iam.RolePolicyAttachment(
                f"{name}-{policy.lower().replace('_', '-')}",
                role=role.name,
                policy_arn=pulumi.Output.concat("arn:", partition, ":iam::aws:policy/", policy),
                opts=child,
            )
        return role.arn


def _instance_tags(pool: str, several_types: bool) -> dict[str, str]:
    """The nodes' own tags. The cost-tag transform marks a template's instances as accelerators from its
    instanceType; a template of several types names none (they are on the node group), so the
    registered AutoShutdown is set here, where the accelerator is known."""
    tags = {"inference-infra.dev/pool": pool}
    registered = registered_cost_tags()
    if several_types and registered is not None:
        tags[AUTO_SHUTDOWN] = bool_tag(registered.auto_shutdown)
    return tags


def _reservation_settings(reservation: EksReservation | None) -> dict:
    """The launch template's reservation settings: target the reservation; a Capacity Block also needs
    the capacity-block market type (EKS user guide, capacity-blocks-mng, read 2026-12-02)."""
    if reservation is None:
        return {}
    settings: dict = {
        "capacity_reservation_specification": {
            "capacity_reservation_target": _snake(reservation_target(reservation))
        }
    }
    if reservation.capacity_block:
        settings["instance_market_options"] = {"market_type": "capacity-block"}
    return settings


def _snake(target: dict[str, str]) -> dict[str, str]:
    names = {
        "capacityReservationId": "capacity_reservation_id",
        "capacityReservationResourceGroupArn": "capacity_reservation_resource_group_arn",
    }
    return {names[k]: v for k, v in target.items()}


class KarpenterNodes(pulumi.ComponentResource):
    """A Karpenter NodePool and its EC2NodeClass for one serving pool."""

    node_pool_name: pulumi.Output[str]

    def __init__(self, name: str, args: KarpenterNodesArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"KarpenterNodes {name!r}", input_problems(args, validate_karpenter_nodes))
        super().__init__("inference-infra:k8s:KarpenterNodes", name, None, opts)
        import pulumi_kubernetes as k8s

        child = pulumi.ResourceOptions(parent=self)
        family = _family(args.instance_type, Cloud.AWS)
        ebs: dict = {
            "volumeSize": f"{args.root_volume_gib}Gi",
            "volumeType": "gp3",
            "encrypted": True,
            "deleteOnTermination": True,
        }
        if args.kms_key_id is not None:
            ebs["kmsKeyID"] = args.kms_key_id
        node_class_spec: dict = {
            "role": args.node_role,
            "amiSelectorTerms": [{"alias": args.ami_alias}],
            "subnetSelectorTerms": [{"tags": dict(args.subnet_tags)}],
            "securityGroupSelectorTerms": [{"tags": dict(args.security_group_tags)}],
            "associatePublicIPAddress": False,
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [{"deviceName": ROOT_DEVICE, "ebs": ebs}],
            "tags": {"inference-infra.dev/pool": args.pool},
        }
        if args.capacity_reservation_ids:
            node_class_spec["capacityReservationSelectorTerms"] = [
                {"id": cr} for cr in args.capacity_reservation_ids
            ]
        node_class = k8s.apiextensions.CustomResource(
            f"{name}-nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": args.pool},
            spec=node_class_spec,
            opts=child,
        )
        types = [t.name for t in karpenter_types(args)]
        resource = ACCELERATOR_RESOURCES[family]
        node_pool = k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": args.pool},
            spec={
                "template": {
                    "metadata": {"labels": node_labels(args.pool, family)},
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": args.pool,
                        },
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types},
                            {
                                "key": "karpenter.sh/capacity-type",
                                "operator": "In",
                                "values": [KARPENTER_CAPACITY_TYPES[m] for m in args.capacity_types],
                            },
                        ],
                        "taints": [t.manifest() for t in node_taints(args.pool, family)],
                        "expireAfter": args.expire_after,
                    },
                },
                "disruption": {
                    "consolidationPolicy": args.consolidation_policy.value,
                    "consolidateAfter": args.consolidate_after,
                },
                "limits": {resource: str(karpenter_limit(args))},
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[node_class]),
        )
        self.node_class = node_class
        self.node_pool = node_pool
        self.node_pool_name = pulumi.Output.from_input(args.pool)
        self.register_outputs({"node_pool_name": self.node_pool_name})


class GkeNodePool(pulumi.ComponentResource):
    """A GKE node pool of GPU or TPU machines for one serving pool."""

    node_pool_name: pulumi.Output[str]
    service_account_email: pulumi.Output[str]

    def __init__(self, name: str, args: GkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        problems = name_problems(name, 27, "GKE names the pool <name>-pool-<7 random>, 40 at most")
        raise_if_invalid(f"GkeNodePool {name!r}", problems + input_problems(args, validate_gke_node_pool))
        super().__init__("inference-infra:k8s:GkeNodePool", name, None, opts)
        import pulumi_gcp as gcp

        child = pulumi.ResourceOptions(parent=self)
        shape = gke_shape(args)
        assert shape is not None  # validated before
        email = (
            args.service_account_email
            if args.service_account_email is not None
            else self._account(name, args, child)
        )
        # GKE taints GPU and TPU node pools with the accelerator's own key itself (scheduling.py), so the
        # pool sets its own taint and GKE adds the accelerator's: the node carries both.
        taints = [
            {"key": t.key, "value": t.value, "effect": GKE_TAINT_EFFECTS[t.effect]}
            for t in node_taints(args.pool, shape.family)
            if t.key != ACCELERATOR_TAINTS[shape.family]
        ]
        node_config: dict = {
            "machine_type": args.machine_type,
            "disk_size_gb": args.disk_size_gib,
            "boot_disk_kms_key": args.boot_disk_kms_key,
            "service_account": email,
            # IAM on the dedicated account is the fence (GKE's hardening guide): the scope is cloud-platform.
            "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            "labels": node_labels(args.pool, shape.family),
            "resource_labels": {"inference-infra-pool": args.pool},
            "taints": taints,
            "spot": args.spot,
            "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            "metadata": {"disable-legacy-endpoints": "true"},
        }
        if shape.family is AcceleratorFamily.NVIDIA_GPU:
            node_config["guest_accelerators"] = [
                {
                    "type": shape.gpu_type,
                    "count": shape.gpu_count,
                    "gpu_driver_installation_config": {"gpu_driver_version": args.gpu_driver_version.value},
                }
            ]
        if args.reservation is not None:
            node_config["reservation_affinity"] = {
                "consume_reservation_type": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": [args.reservation],
            }
        extra: dict = {}
        # The placement topology is a multi-host ("pod slice") node pool's: the GKE API documents
        # PlacementPolicy.tpu_topology as the "TPU placement topology for pod slice node pool", and GKE's
        # single-host TPU node pools (ct5lp-hightpu-4t as v5litepod-4, ct6e-standard-4t, ...) are
        # created by machine type alone (cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus,
        # read 2026-12-02). A topology naming one host's chips therefore renders no placement policy:
        # with one, GKE would treat each node pool as one atomic slice (and a COMPACT policy holds the
        # pool to one zone), not as the scalable set of independent hosts a single-host pool is.
        if shape.family is AcceleratorFamily.GOOGLE_TPU and args.tpu_topology is not None and shape.hosts > 1:
            extra["placement_policy"] = {"type": "COMPACT", "tpu_topology": args.tpu_topology}
        pool = gcp.container.NodePool(
            f"{name}-pool",
            cluster=args.cluster,
            location=args.location,
            project=args.project,
            node_locations=list(args.node_locations) or None,
            autoscaling={
                "total_min_node_count": args.min_nodes,
                "total_max_node_count": args.max_nodes,
                "location_policy": "ANY",
            },
            management={"auto_repair": True, "auto_upgrade": True},
            node_config=node_config,
            opts=child,
            **extra,
        )
        self.node_pool = pool
        self.node_pool_name = pool.name
        self.service_account_email = pulumi.Output.from_input(email)
        self.register_outputs(
            {"node_pool_name": self.node_pool_name, "service_account_email": self.service_account_email}
        )

    def _account(self, name: str, args: GkeNodePoolArgs, child: pulumi.ResourceOptions) -> pulumi.Output[str]:
        import pulumi_gcp as gcp

        from inference_infra.components.gcp.service_account import account_id

        account = gcp.serviceaccount.Account(
            f"{name}-sa",
            account_id=account_id(name),
            display_name=f"inference-infra {args.pool} GKE nodes",
            description=f"GKE nodes of serving pool {args.pool}: logs, metrics, image pulls",
            project=args.project,
            opts=child,
        )
        project = args.project if args.project is not None else gcp.config.project
        for role in GKE_NODE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-{role.split('/')[1].replace('.', '-').lower()}",
                project=project,
                role=role,
                member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=child,
            )
        return account.email
