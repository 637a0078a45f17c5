"""The stack's observability part: GpuObservability on the team's Kubernetes cluster.

Config: `inference-infra:observability` (what to deploy) and
`inference-infra:observabilitySecrets` (receiver keys, optionally a
kubeconfig), the latter set with `pulumi config set --secret --path`, so no
webhook URL or routing key sits in a stack file in clear text.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from inference_infra.components.errors import Problem, did_you_mean
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, ObservabilitySettings, StackSettings
from inference_infra.infra.plans import planned_pools
from inference_infra.infra.pools import PlannedPool

SECRETS_KEY = f"{NAMESPACE}:observabilitySecrets"
_SECTION = f"{NAMESPACE}:observability"


def validate(settings: StackSettings) -> list[Problem]:
    from inference_infra.components.k8s.gpu_observability import validate_gpu_observability

    obs = _section(settings)
    problems: list[Problem] = []
    secrets = settings.observability_secrets
    named = [(f"alertReceivers[{i}].secret", r.secret) for i, r in enumerate(obs.alert_receivers)]
    if obs.kubeconfig_secret is not None:
        named.append(("kubeconfigSecret", obs.kubeconfig_secret))
    for key, secret in named:
        if secret not in secrets:
            problems.append(
                Problem(
                    f"{_SECTION}.{key}",
                    secret,
                    f"must name a key of {SECRETS_KEY}{did_you_mean(secret, secrets)}; set it with "
                    f"`pulumi config set --secret --path '{SECRETS_KEY}.{secret}' VALUE`",
                )
            )
    if secrets and not _is_secret_config(SECRETS_KEY):
        problems.append(
            Problem(SECRETS_KEY, "(plain text)", "must be set with `pulumi config set --secret --path ...`")
        )
    if settings.is_production and not obs.alert_receivers:
        problems.append(
            Problem(
                f"{_SECTION}.alertReceivers",
                [],
                "must name at least one receiver in production: alerts that go nowhere are not monitoring",
            )
        )
    problems += _identity_problems(settings)
    args = component_args(settings, with_secrets=False)
    problems += [_rekey(p) for p in validate_gpu_observability(obs.name, args)]
    return problems


def prometheus_service_account(settings: StackSettings) -> tuple[str, str]:
    """(namespace, name) of Prometheus's Kubernetes service account: kube-prometheus-stack names it
    '<fullname>-prometheus', and GpuObservability sets the fullname to its release, '<name>-kps'."""
    obs = _section(settings)
    return obs.namespace, f"{obs.name}-kps-prometheus"


def _identity_problems(settings: StackSettings) -> list[Problem]:
    from inference_infra.components.aws.prometheus_discovery import (
        PrometheusDiscoveryRoleArgs,
        validate_prometheus_discovery_role,
    )
    from inference_infra.components.gcp.prometheus_discovery import (
        PrometheusDiscoveryAccountArgs,
        validate_prometheus_discovery_account,
    )

    obs = _section(settings)
    identity = obs.discovery_identity
    if identity is None:
        return []
    key = f"{_SECTION}.discoveryIdentity"
    namespace, account = prometheus_service_account(settings)
    if (identity.eks_oidc_provider_arn is None) == (identity.gke_workload_pool is None):
        return [
            Problem(
                key,
                identity.model_dump(by_alias=True, exclude_none=True),
                "must set exactly one of eksOidcProviderArn (Prometheus on EKS) and gkeWorkloadPool "
                "(Prometheus on GKE): one Prometheus service account runs on one cluster",
            )
        ]
    if identity.eks_oidc_provider_arn is not None and obs.discovery_role_arn is not None:
        return [
            Problem(
                f"{_SECTION}.discoveryRoleArn",
                obs.discovery_role_arn,
                "must be unset with discoveryIdentity.eksOidcProviderArn, which creates the role",
            )
        ]
    if identity.eks_oidc_provider_arn is not None:
        args = PrometheusDiscoveryRoleArgs(
            oidc_provider_arn=identity.eks_oidc_provider_arn, namespace=namespace, service_account=account
        )
        found = validate_prometheus_discovery_role(args)
        return [Problem(f"{key}.eksOidcProviderArn", p.value, p.allowed) for p in found]
    project = _gcp_project()
    if project is None:
        return [Problem(f"{key}.gkeWorkloadPool", identity.gke_workload_pool, "needs gcp:project to be set")]
    args = PrometheusDiscoveryAccountArgs(
        project=project,
        workload_pool=identity.gke_workload_pool,
        namespace=namespace,
        service_account=account,
    )
    return [
        Problem(f"{key}.gkeWorkloadPool" if p.input == "workload_pool" else "gcp:project", p.value, p.allowed)
        for p in validate_prometheus_discovery_account(args)
    ]


def _gcp_project() -> str | None:
    import pulumi

    return pulumi.Config("gcp").get("project")


def discovery_identity(settings: StackSettings, built: Built) -> dict[str, Any]:
    """Creates the discovery identity the section asks for; returns Prometheus's service account
    annotations that name it (IRSA role ARN, or Workload Identity account email)."""
    obs = _section(settings)
    identity = obs.discovery_identity
    if identity is None:
        return {}
    namespace, account = prometheus_service_account(settings)
    if identity.eks_oidc_provider_arn is not None:
        from inference_infra.components.aws.prometheus_discovery import (
            PrometheusDiscoveryRole,
            PrometheusDiscoveryRoleArgs,
        )

        role = PrometheusDiscoveryRole(
            f"{obs.name}-discovery",
            PrometheusDiscoveryRoleArgs(
                oidc_provider_arn=identity.eks_oidc_provider_arn, namespace=namespace, service_account=account
            ),
        )
        return dict(role.service_account_annotations)
    from inference_infra.components.gcp.prometheus_discovery import (
        PrometheusDiscoveryAccount,
        PrometheusDiscoveryAccountArgs,
    )

    gsa = PrometheusDiscoveryAccount(
        f"{obs.name}-discovery",
        PrometheusDiscoveryAccountArgs(
            project=_gcp_project() or "",
            workload_pool=identity.gke_workload_pool,
            namespace=namespace,
            service_account=account,
        ),
    )
    return dict(gsa.service_account_annotations)


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    import pulumi

    from inference_infra.components.k8s.gpu_observability import GpuObservability

    obs = _section(settings)
    gcp = pulumi.Config("gcp")
    args = component_args(
        settings,
        with_secrets=True,
        aws_region=pulumi.Config("aws").get("region"),
        gcp_region=gcp.get("region"),
        gcp_project=gcp.get("project"),
        gcp_zone=gcp.get("zone"),
    )
    args = _with_tpu_engines(args, settings, built)
    for warning in latency_budget_warnings(settings, planned_pools(settings)):
        pulumi.log.warn(warning)
    annotations = discovery_identity(settings, built)
    if annotations:
        args = dataclasses.replace(
            args,
            prometheus_service_account_annotations={
                **args.prometheus_service_account_annotations,
                **annotations,
            },
        )
    stack = GpuObservability(obs.name, args)
    return {
        "monitoringNamespace": obs.namespace,
        "prometheusService": stack.prometheus_service,
        "grafanaService": stack.grafana_service,
        "alertmanagerService": stack.alertmanager_service,
        "grafanaAdminPassword": stack.grafana_admin_password,
    }


def pool_engine_ports(pools: list[PlannedPool]) -> dict[str, list[int]]:
    """Each AWS pool and GCP GPU fleet that serves a model -> the ports its engines' metrics are scraped
    on; TPU VMs are scraped as static targets instead (`_with_tpu_engines`). Every fleet admits
    Prometheus to its metrics-only ports alone (each engine's port + 1000, GET /metrics only)."""
    return {
        p.name: list(p.serving.engines.metrics_ports)
        for p in pools
        if p.serving is not None and p.accelerator != "tpu" and not p.kubernetes
    }


def scraped_tpus(settings: StackSettings) -> list[str]:
    """TPU VMs whose engines the stack's Prometheus scrapes: a model, monitoringRanges, not queued."""
    obs = _section(settings)
    if not obs.scrape_fleets:
        return []
    return [
        t.name for t in settings.tpu_vms if t.model is not None and t.monitoring_cidr_blocks and not t.queued
    ]


def _with_tpu_engines(args: Any, settings: StackSettings, built: Built) -> Any:
    """The TPU VMs' engines as static targets (their hosts' private IPs, from the built slices)."""
    from inference_infra.components.monitoring.scrape import ScrapeSettings, StaticTargets

    targets = []
    for name in scraped_tpus(settings):
        pool = built.gcp_pools.get(name)
        if pool is None or pool.engines is None or pool.component.vm is None:
            continue
        addresses = pool.component.vm.network_endpoints.apply(
            lambda eps: [e.ip_address for e in eps or [] if e.ip_address]
        )
        targets.append(
            StaticTargets(
                pool=name,
                instance_type=pool.component.accelerator_type,
                addresses=addresses,
                ports=tuple(pool.engines.metrics_ports),  # its metrics-only ports (tpu_vm.py firewall)
            )
        )
    if not targets:
        return args
    current = args.fleet_discovery or ScrapeSettings(discovery=())
    return dataclasses.replace(
        args, fleet_discovery=dataclasses.replace(current, static_engines=tuple(targets))
    )


def _section(settings: StackSettings) -> ObservabilitySettings:
    if settings.observability is None:
        raise ValueError("the observability part runs only for a stack config with an observability section")
    return settings.observability


def component_args(
    settings: StackSettings,
    *,
    with_secrets: bool,
    aws_region: str | None = None,
    gcp_region: str | None = None,
    gcp_project: str | None = None,
    gcp_zone: str | None = None,
) -> Any:
    """GpuObservabilityArgs for the stack's section; secrets as Pulumi secrets, or blank when not wanted.

    `inference-infra monitoring rules --stack` renders its rules from these args
    too, so the CLI and the deployed PrometheusRule cannot differ. Prices come
    from the stack's own regions (`aws:region`, `gcp:region`).
    """
    import pulumi

    obs = _section(settings)

    def secret(key: str | None) -> Any:
        if key is None or not with_secrets:
            return None
        value = settings.observability_secrets[key].get_secret_value()
        return pulumi.Output.secret(value)

    pools = planned_pools(settings)
    return obs.to_args(
        aws_price_region=aws_region or None,
        gcp_price_region=gcp_region or None,
        kubeconfig=secret(obs.kubeconfig_secret),
        **serving_args(settings, pools),
        **fleet_scrape_args(
            settings, pools, aws_region, gcp_project, gcp_zone or (f"{gcp_region}-a" if gcp_region else None)
        ),
        alert_receivers=[
            r.to_args(secret=secret(r.secret) if with_secrets else "") for r in obs.alert_receivers
        ],
    )


def _is_secret_config(key: str) -> bool:
    from pulumi.runtime.config import is_config_secret

    return is_config_secret(key)


def _rekey(p: Problem) -> Problem:
    """A component input name ('rules.thresholds.idle_minutes') as its stack config key."""
    path = p.input.removeprefix("rules.")
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path)
    return Problem(f"{_SECTION}.{camel}", p.value, p.allowed)


def serving_args(settings: StackSettings, pools: list[PlannedPool]) -> dict[str, Any]:
    """The stack's fleets as the monitoring rules see them: latency class, expected targets, catalog price.

    A pool's price is its machine's catalog price times its nodes, as the fleet plans itself (the
    configured machine or the planner's pick); where the planner chose an AWS machine, its estimate of
    USD per million tokens is rendered beside it. GCP N1 machines (GPUs attached, priced apart) and TPU
    slices are not priced here.
    """
    from inference_infra.components.monitoring.absent import FleetTargets
    from inference_infra.components.monitoring.serving import Latency, ServingSettings
    from inference_infra.components.monitoring.serving_cost import pool_cost

    latency: dict[str, Latency] = {}
    fleets, costs = [], []
    for pool in pools:
        if pool.accelerator == "tpu":
            continue
        latency[pool.name] = Latency(pool.latency)
        if not pool.kubernetes:  # a Kubernetes pool's nodes are the cluster's: their exporters carry no pool
            fleets.append(FleetTargets(pool=pool.name, kind=pool.accelerator, engine=pool.serves_model))
        priced = pool.machine is not None and pool.nodes > 0
        if priced and not (pool.cloud == "gcp" and pool.machine.startswith("n1-")):
            costs.append(
                pool_cost(pool.name, pool.cloud, pool.machine, pool.nodes, pool.usd_per_million_tokens)
            )
    for name in scraped_tpus(settings):  # only the engine: no dcgm-exporter or node exporter on TPU VMs
        fleets.append(FleetTargets(pool=name, kind="tpu", engine=True, node_exporter=False))
    # Each pool's engines' --max-num-seqs, as the fleet planned them: under-use is judged against it.
    seqs = {p.name: p.serving.engines.max_num_seqs for p in pools if p.serving is not None}
    serving = ServingSettings(pools=latency, max_num_seqs=seqs)
    return {"serving": serving, "fleets": tuple(fleets), "pool_costs": tuple(costs)}


def latency_budget_warnings(settings: StackSettings, pools: list[PlannedPool]) -> list[str]:
    """A warning for each pool whose planned load misses its own latency budget: its serving alerts
    would fire from day one, so the plan says so (scraped TPU slices, which declare no class, are
    judged as interactive)."""
    from inference_infra.components.monitoring.serving_load import budget_misses, planned_load

    warnings = []
    tpus = set(scraped_tpus(settings))
    for pool in pools:
        if pool.model is None or pool.machine is None or pool.serving is None:
            continue
        if pool.accelerator == "tpu" and pool.name not in tpus:
            continue
        latency = pool.latency or "interactive"
        model = pool.model
        hosts = pool.plan.hosts_per_replica if pool.plan is not None else 1
        load = planned_load(model.name, pool.machine, pool.cloud, model.traffic(), model.precision(), hosts)
        if misses := budget_misses(load, latency):
            declare = ", or declare `latency: batch` if it serves batch work" if pool.latency else ""
            warnings.append(
                f"pool '{pool.name}' is planned over its {latency} latency budget: {'; '.join(misses)} "
                f"({model.name} on {pool.machine}, {load.running} sequences of {model.context_tokens:,} "
                "tokens per engine); its serving alerts would fire from the first hour. Lower "
                f"model.concurrency or model.contextTokens, choose a faster machine{declare}."
            )
    return warnings


def fleet_scrape_args(
    settings: StackSettings,
    pools: list[PlannedPool],
    aws_region: str | None,
    gcp_project: str | None = None,
    gcp_zone: str | None = None,
) -> dict[str, Any]:
    """Discovery of the stack's own fleets: AWS accelerators tagged with the stack's Environment (EC2
    discovery in aws:region), GCP GPU VMs labelled with its environment (GCE discovery in gcp:project,
    in the fleets' zones). TPU VMs are not Compute Engine instances; GCE discovery does not list them."""
    from inference_infra.components.monitoring.scrape import AwsDiscovery, GcpDiscovery, ScrapeSettings
    from inference_infra.components.tagging import gcp_label_value

    obs = _section(settings)
    if not obs.scrape_fleets:
        return {}
    found: list[AwsDiscovery | GcpDiscovery] = []
    if aws_region and (settings.aws_gpu_fleets or settings.aws_inferentia_fleets):
        found.append(AwsDiscovery(regions=[aws_region], tags={"Environment": settings.environment}))
    # Every zone a fleet's VMs may run in: its zone and, for a managed group, every zone of the
    # distribution (components/gcp/elastic.py: the zone, then `zones`).
    zones = sorted(
        {
            z
            for f in settings.gcp_gpu_fleets
            for z in (f.zone or gcp_zone, *(getattr(f, "zones", None) or ()))
            if z
        }
    )
    if gcp_project and zones:
        labels = {"environment": gcp_label_value(settings.environment)}
        found.append(GcpDiscovery(project=gcp_project, zones=zones, labels=labels))
    if not found:
        return {}
    scrape = ScrapeSettings(
        discovery=found[0] if len(found) == 1 else found, pool_engine_ports=pool_engine_ports(pools)
    )
    out: dict[str, Any] = {"fleet_discovery": scrape}
    if obs.discovery_role_arn:
        out["prometheus_service_account_annotations"] = {"eks.amazonaws.com/role-arn": obs.discovery_role_arn}
    return out
