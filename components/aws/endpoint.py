"""InferenceEndpoint: an internal Application Load Balancer in front of the fleets' engines.

- an internal ALB in the private subnets (internet-facing only with `public=True`);
- a target group per pool (`fleet.endpoint_pool()`): each instance once per engine port, health check on
  the engine's `/health` with thresholds sized for a model load, slow start from
  the pool's cold-start estimate;
- an HTTP listener (inside the VPC) or HTTPS with `certificate_arn`; request
  (idle) timeout sized for streamed generations;
- rules: `X-Model-Pool: <pool>` sends to that pool; the Host header picks a
  route (a model), which forwards to its pools by weight (canary) with optional
  stickiness; every rule also holds a path condition, so only the API the engine's key guards
  (`/v1/*`) and `/health` reach an engine; anything else (another path such as `/invocations`,
  `/tokenize` or `/metrics`, an unknown Host) gets a 404 from the load balancer;
- the pool's security group admits the engine ports from the ALB only;
- access logs to an encrypted S3 bucket (made here unless one is given).

In production (the registered cost tags' Environment starts with prod or prd) the load balancer has
deletion protection, and the log bucket made here expires logs after a year and admits delivery for
this account only (`aws:SourceAccount`, and the `AWSLogs/<account id>/` path); each can be set either
way (`deletion_protection`, `access_log_retention_days`, `scoped_log_delivery`).

Every input is checked before any resource is registered.
"""

from __future__ import annotations

import json
import math

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.buckets import access_log_bucket
from inference_infra.components.aws.endpoint_args import (
    ELB_LOG_ACCOUNTS,
    ELB_LOG_ACCOUNTS_AS_OF,
    ELB_SERVICE_PRINCIPAL_REGIONS,
    HEALTH_INTERVAL_SECONDS,
    LOG_DELIVERY_SERVICE,
    InferenceEndpointArgs,
    health_check,
    log_delivery_principals,
    log_region_problem,
    validate_endpoint,
)
from inference_infra.components.endpoints.routing import (
    ALB_PATH_PATTERNS,
    GUARDED_API_PREFIX,
    POOL_HEADER,
    EndpointPool,
    default_host,
    route_model,
)
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.validation import check_types

__all__ = [
    "ELB_LOG_ACCOUNTS",
    "ELB_LOG_ACCOUNTS_AS_OF",
    "ELB_SERVICE_PRINCIPAL_REGIONS",
    "HEALTH_INTERVAL_SECONDS",
    "LOG_DELIVERY_SERVICE",
    "InferenceEndpoint",
    "InferenceEndpointArgs",
    "health_check",
    "log_delivery_principals",
    "log_region_problem",
    "validate_endpoint",
]


def _default_provider_region_problems(
    args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None
) -> list[Problem]:
    """The stack's aws:region, checked up front when the default provider will answer the region look-up
    (an explicit provider or parent is checked when its region is known)."""
    if args.region is not None or args.access_logs_bucket is not None:
        return []
    if opts is not None and (opts.provider or opts.providers or opts.parent):
        return []
    configured = pulumi.Config("aws").get("region")
    problem = configured and log_region_problem("aws:region (the aws provider's region)", configured)
    return [problem] if problem else []


# Every rule's path condition: the engine's guarded API and its health path, nothing else (see
# components/endpoints/routing.py). A rule ANDs its conditions, so a Host or header alone never forwards.
# Limits checked (terraform-provider-aws internal/service/elbv2/listener_rule.go at the pulumi-aws 7 pin:
# path_pattern.values is a set of strings up to 128 characters; the ELB quotas page: 5 condition values
# and 5 wildcards per rule): a route rule holds host (1 value) + these 2, a header rule 1 + 2.
_API_PATHS = {"path_pattern": {"values": list(ALB_PATH_PATTERNS)}}


class InferenceEndpoint(pulumi.ComponentResource):
    dns_name: pulumi.Output[str]
    arn: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    target_group_arns: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(
            f"InferenceEndpoint {name!r}",
            check_types(args) or validate_endpoint(args) + _default_provider_region_problems(args, opts),
        )
        super().__init__("inference-infra:aws:InferenceEndpoint", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self._name, self._args = name, args

        group = aws.ec2.SecurityGroup(
            f"{name}-lb-sg",
            vpc_id=args.vpc_id,
            description=f"{name}: the endpoint's listener from named callers; engine ports to the pools",
            tags={"Name": f"{name}-lb-sg", **args.tags},
            opts=child,
        )
        self.security_group_id = group.id
        self._listener_ingress(group)
        protected, self._retention_days, self._scoped = args.hardened()
        logs = args.access_logs_bucket if args.access_logs_bucket is not None else self._log_bucket()

        lb = aws.lb.LoadBalancer(
            f"{name}-alb",
            load_balancer_type="application",
            internal=not args.internet_facing,
            subnets=list(args.subnet_ids),
            security_groups=[group.id],
            idle_timeout=args.request_timeout_seconds,
            drop_invalid_header_fields=True,
            enable_deletion_protection=protected,
            access_logs={"bucket": logs, "prefix": name, "enabled": True},
            tags={"Name": name, **args.tags},
            opts=child,
        )
        self.arn, self.dns_name = lb.arn, lb.dns_name

        self.target_group_arns = {}
        # Every target group of a pool: one for a fixed pool; one per engine port for an elastic pool,
        # whose group registers each machine on each target group's port.
        self.pool_target_group_arns: dict[str, list[pulumi.Output[str]]] = {}
        for pool in args.pools:
            self.pool_target_group_arns[pool.name] = self._pool(pool, group)
            self.target_group_arns[pool.name] = self.pool_target_group_arns[pool.name][0]

        listener = aws.lb.Listener(
            f"{name}-listener",
            load_balancer_arn=lb.arn,
            port=args.listener_port,
            protocol="HTTPS" if args.certificate_arn else "HTTP",
            certificate_arn=args.certificate_arn,
            ssl_policy=args.ssl_policy if args.certificate_arn else None,
            default_actions=[
                {
                    "type": "fixed-response",
                    "fixed_response": {
                        "content_type": "text/plain",
                        "status_code": "404",
                        "message_body": f"no route: the API is under {GUARDED_API_PREFIX} with the Host "
                        f"set to a model or the {POOL_HEADER} header naming a pool",
                    },
                }
            ],
            tags=dict(args.tags),
            opts=child,
        )
        self._rules(listener)
        self.register_outputs(
            {
                "dns_name": self.dns_name,
                "arn": self.arn,
                "security_group_id": self.security_group_id,
                "target_group_arns": self.target_group_arns,
                "pool_target_group_arns": self.pool_target_group_arns,
            }
        )

    def _listener_ingress(self, group: aws.ec2.SecurityGroup) -> None:
        name, args = self._name, self._args
        child = pulumi.ResourceOptions(parent=self)
        sources: list[tuple[str, dict[str, pulumi.Input[str]]]] = [
            (f"client-cidr{i}", {"cidr_ipv6" if ":" in c else "cidr_ipv4": c})
            for i, c in enumerate(args.client_cidr_blocks)
        ]
        sources += [
            (f"client-sg{i}", {"referenced_security_group_id": s})
            for i, s in enumerate(args.client_security_group_ids)
        ]
        for suffix, source in sources:
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-{suffix}",
                security_group_id=group.id,
                ip_protocol="tcp",
                from_port=args.listener_port,
                to_port=args.listener_port,
                description=f"endpoint listener (port {args.listener_port})",
                **source,
                opts=child,
            )

    def _pool(self, pool: EndpointPool, group: aws.ec2.SecurityGroup) -> list[pulumi.Output[str]]:
        name = f"{self._name}-{pool.name}"
        child = pulumi.ResourceOptions(parent=self)
        first, last = min(pool.ports), max(pool.ports)
        if pool.group_name is not None:
            arns = self._group_target_groups(pool, name)
        else:
            arns = [self._instance_target_group(pool, name, first)]
        ports = f"{first}" if first == last else f"{first}-{last}"
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-from-lb",
            security_group_id=pool.security_group_id,
            referenced_security_group_id=group.id,
            ip_protocol="tcp",
            from_port=first,
            to_port=last,
            description=f"engine ports {ports} from the endpoint {self._name} only",
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-to-pool",
            security_group_id=group.id,
            referenced_security_group_id=pool.security_group_id,
            ip_protocol="tcp",
            from_port=first,
            to_port=last,
            description=f"engine ports {ports} of pool {pool.name}",
            opts=child,
        )
        return arns

    def _target_group(
        self, pool: EndpointPool, resource_name: str, port: int, delay: int
    ) -> aws.lb.TargetGroup:
        name = f"{self._name}-{pool.name}"
        return aws.lb.TargetGroup(
            resource_name,
            vpc_id=self._args.vpc_id,
            target_type="instance",
            protocol="HTTP",
            port=port,
            health_check=health_check(pool),
            slow_start=pool.slow_start_seconds,
            deregistration_delay=delay,
            load_balancing_algorithm_type="least_outstanding_requests",
            tags={"Name": name, "Pool": pool.name, "Model": pool.model, **self._args.tags},
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _group_target_groups(self, pool: EndpointPool, name: str) -> list[pulumi.Output[str]]:
        """An elastic pool: a target group per engine port, each attached to the pool's group, which
        registers a machine on them as it enters service and deregisters it (draining for the pool's
        longest generation) before it leaves."""
        delay = pool.deregistration_delay_seconds
        if delay is None:
            delay = min(self._args.request_timeout_seconds, 3600)
        arns = []
        for i, port in enumerate(sorted(pool.ports)):
            suffix = "tg" if i == 0 else f"tg-{port}"
            target_group = self._target_group(pool, f"{name}-{suffix}", port, delay)
            aws.autoscaling.TrafficSourceAttachment(
                f"{name}-{suffix}-group",
                autoscaling_group_name=pool.group_name,
                traffic_source={"identifier": target_group.arn, "type": "elbv2"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            arns.append(target_group.arn)
        return arns

    def _instance_target_group(self, pool: EndpointPool, name: str, first: int) -> pulumi.Output[str]:
        child = pulumi.ResourceOptions(parent=self)
        # let streams finish
        target_group = self._target_group(
            pool, f"{name}-tg", first, min(self._args.request_timeout_seconds, 3600)
        )
        for i, instance_id in enumerate(pool.instance_ids):
            for port in pool.ports:
                aws.lb.TargetGroupAttachment(
                    f"{name}-{i}-{port}",
                    target_group_arn=target_group.arn,
                    target_id=instance_id,
                    port=port,
                    opts=child,
                )
        return target_group.arn

    def _rules(self, listener: aws.lb.Listener) -> None:
        name, args = self._name, self._args
        child = pulumi.ResourceOptions(parent=self)
        pools = {p.name: p for p in args.pools}
        priority = 1
        # The rules that send traffic to one pool alone (its header rule, routes to it alone): what an
        # elastic pool's off-hours switch points at its 503 responder (components/aws/off_hours.py).
        self.pool_rule_arns: dict[str, list[pulumi.Output[str]]] = {p.name: [] for p in args.pools}
        for pool in args.pools:
            header_rule = aws.lb.ListenerRule(
                f"{name}-header-{pool.name}",
                listener_arn=listener.arn,
                priority=priority,
                conditions=[
                    {"http_header": {"http_header_name": POOL_HEADER, "values": [pool.name]}},
                    _API_PATHS,
                ],
                actions=[self._forward_pool(pool.name)],
                tags=dict(args.tags),
                opts=child,
            )
            self.pool_rule_arns[pool.name].append(header_rule.arn)
            priority += 1
        for i, route in enumerate(args.routes):
            model = route_model(route, pools) or ""
            forward: dict[str, object] = {"target_groups": self._weighted(route.pools)}
            if route.sticky_seconds:
                forward["stickiness"] = {"enabled": True, "duration": route.sticky_seconds}
            route_rule = aws.lb.ListenerRule(
                f"{name}-route{i}",
                listener_arn=listener.arn,
                priority=100 + i,
                conditions=[{"host_header": {"values": [route.host or default_host(model)]}}, _API_PATHS],
                actions=[{"type": "forward", "forward": forward}],
                tags={"Model": model, **args.tags},
                opts=child,
            )
            if len({w.pool for w in route.pools}) == 1 and not route.sticky_seconds:
                self.pool_rule_arns[route.pools[0].pool].append(route_rule.arn)

    def _forward_pool(self, pool: str) -> dict[str, object]:
        arns = self.pool_target_group_arns[pool]
        if len(arns) == 1:
            return {"type": "forward", "target_group_arn": arns[0]}
        return {"type": "forward", "forward": {"target_groups": [{"arn": a, "weight": 1} for a in arns]}}

    def _weighted(self, weights) -> list[dict[str, object]]:
        """A route's target groups with weights: a pool with k target groups (an elastic pool, one per
        engine port) shares its weight among them, scaled by the routes' lcm so shares stay exact."""
        groups = [len(self.pool_target_group_arns[w.pool]) for w in weights]
        scale = math.lcm(*groups)
        return [
            {"arn": arn, "weight": w.weight * scale // k}
            for w, k in zip(weights, groups, strict=True)
            for arn in self.pool_target_group_arns[w.pool]
        ]

    def _log_bucket(self) -> pulumi.Output[str]:
        name, args = self._name, self._args
        child = pulumi.ResourceOptions(parent=self)
        bucket = access_log_bucket(  # ALB access logs support SSE-S3 only, which it uses
            f"{name}-logs",
            prefix=f"{name}-logs",
            naming={"bucket_prefix": f"{name[:36]}-logs-"},
            tags={"Name": f"{name}-logs", **args.tags},
            expire_days=self._retention_days,
            opts=child,
        )
        region: pulumi.Input[str] = (
            args.region
            if args.region is not None
            else aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=self)).region
        )
        where = "region" if args.region is not None else "aws:region (the aws provider's region)"
        account: pulumi.Input[str] = (
            aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
            if self._scoped
            else ""
        )

        def policy(region_name: str, account_id: str, bucket_arn: str) -> str:
            # Scoped: objects under this account's AWSLogs/ path only, and the log-delivery service
            # acting for this account (aws:SourceAccount is present only when a service principal acts,
            # so the older regions' ELB account is held to the path).
            objects = (
                f"{bucket_arn}/{name}/AWSLogs/{account_id}/*"
                if account_id
                else f"{bucket_arn}/{name}/AWSLogs/*"
            )
            statements: list[dict[str, object]] = []
            for i, principal in enumerate(log_delivery_principals(region_name, where)):
                statement: dict[str, object] = {
                    "Sid": f"ElbLogDelivery{i}",
                    "Effect": "Allow",
                    "Principal": principal,
                    "Action": "s3:PutObject",
                    "Resource": objects,
                }
                if account_id and "Service" in principal:
                    statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account_id}}
                statements.append(statement)
            statements.append(
                {
                    "Sid": "RefuseWithoutTls",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [bucket_arn, f"{bucket_arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            )
            return json.dumps({"Version": "2012-10-17", "Statement": statements})

        aws.s3.BucketPolicy(
            f"{name}-logs-policy",
            bucket=bucket.id,
            policy=pulumi.Output.all(region, account, bucket.arn).apply(lambda a: policy(*a)),
            opts=child,
        )
        return bucket.bucket
