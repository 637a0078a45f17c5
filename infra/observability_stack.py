"""The stack's observability part: GpuObservability on the team's Kubernetes cluster.

Config: `inference-infra:observability` (what to deploy) and
`inference-infra:observabilitySecrets` (receiver keys, optionally a
kubeconfig), the latter set with `pulumi config set --secret --path`, so no
webhook URL or routing key sits in a stack file in clear text.
"""

from __future__ import annotations

import re
from typing import Any

from inference_infra.components.errors import Problem, did_you_mean
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, ObservabilitySettings, StackSettings

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
    args = component_args(settings, with_secrets=False)
    problems += [_rekey(p) for p in validate_gpu_observability(obs.name, args)]
    return problems


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    import pulumi

    from inference_infra.components.k8s.gpu_observability import GpuObservability

    obs = _section(settings)
    args = component_args(
        settings,
        with_secrets=True,
        aws_region=pulumi.Config("aws").get("region"),
        gcp_region=pulumi.Config("gcp").get("region"),
    )
    stack = GpuObservability(obs.name, args)
    return {
        "monitoringNamespace": obs.namespace,
        "prometheusService": stack.prometheus_service,
        "grafanaService": stack.grafana_service,
        "alertmanagerService": stack.alertmanager_service,
        "grafanaAdminPassword": stack.grafana_admin_password,
    }


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
) -> Any:
    """GpuObservabilityArgs for the stack's section; secrets as Pulumi secrets, or blank when not wanted.

    `inference-infra monitoring rules --stack` renders its rules from these args
    too, so the CLI and the deployed PrometheusRule cannot differ. Prices come
    from the stack's own regions (`aws:region`, `gcp:region`).
    """
    import pulumi

    from inference_infra.components.k8s.gpu_observability import AlertReceiver, GpuObservabilityArgs
    from inference_infra.components.monitoring.rules import DEFAULT_RUNBOOK_URL

    obs = _section(settings)

    def secret(key: str | None) -> Any:
        if key is None or not with_secrets:
            return None
        value = settings.observability_secrets[key].get_secret_value()
        return pulumi.Output.secret(value)

    return GpuObservabilityArgs(
        aws_price_region=aws_region or None,
        gcp_price_region=gcp_region or None,
        namespace=obs.namespace,
        kube_context=obs.kube_context,
        kubeconfig=secret(obs.kubeconfig_secret),
        retention_days=obs.retention_days,
        storage_size_gib=obs.storage_size_gib,
        storage_class=obs.storage_class,
        neuron_monitor=obs.neuron_monitor,
        runbook_url=obs.runbook_url or DEFAULT_RUNBOOK_URL,
        thresholds=obs.threshold_values(),
        **serving_args(settings),
        **fleet_scrape_args(settings, aws_region),
        alert_receivers=[
            AlertReceiver(
                name=r.name,
                kind=r.kind,
                channel=r.channel,
                severities=tuple(r.severities),
                secret=secret(r.secret) if with_secrets else "",
            )
            for r in obs.alert_receivers
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


def serving_args(settings: StackSettings) -> dict[str, Any]:
    """The stack's fleets as the monitoring rules see them: latency class, expected targets, catalog price.

    A pool's price is its resolved instance type's catalog price times its nodes; where the planner chose
    the type, its estimate of USD per million tokens is rendered beside it.
    """
    from inference_infra.components.monitoring.absent import FleetTargets
    from inference_infra.components.monitoring.serving import Latency, ServingSettings
    from inference_infra.components.monitoring.serving_cost import pool_cost
    from inference_infra.infra.aws_stack import _fleet_lists, resolve

    pools: dict[str, Latency] = {}
    fleets, costs = [], []
    for where, fleet_kind, fleet_list in _fleet_lists(settings):
        kind = "neuron" if where == "awsInferentiaFleets" else "nvidia"
        for i, f in enumerate(fleet_list):
            pools[f.name] = Latency(f.latency)
            fleets.append(FleetTargets(pool=f.name, kind=kind, engine=f.model is not None))
            nodes = f.count if f.count is not None else f.reserved + f.spot + f.on_demand
            # The same resolution the fleet itself gets: the configured type or the planner's pick,
            # and the planner's USD per million tokens for it when the planner chose it.
            resolution = resolve(f, fleet_kind, f"{where}[{i}]")
            if resolution.instance_type is not None and not resolution.problems and nodes > 0:
                planned = resolution.choice.option.usd_per_million_tokens if resolution.choice else None
                costs.append(pool_cost(f.name, "aws", resolution.instance_type, nodes, planned))
    for g in settings.gcp_gpu_fleets:
        pools[g.name] = Latency(g.latency)
        fleets.append(FleetTargets(pool=g.name, kind="nvidia", engine=g.model is not None))
        if g.machine_type is not None and not g.machine_type.startswith("n1-"):
            costs.append(pool_cost(g.name, "gcp", g.machine_type, g.count))
    return {"serving": ServingSettings(pools=pools), "fleets": tuple(fleets), "pool_costs": tuple(costs)}


def fleet_scrape_args(settings: StackSettings, aws_region: str | None) -> dict[str, Any]:
    """EC2 discovery of the stack's own fleets: running accelerators tagged with the stack's Environment."""
    from inference_infra.components.monitoring.scrape import AwsDiscovery, ScrapeSettings

    obs = _section(settings)
    if (
        not obs.scrape_fleets
        or not aws_region
        or not (settings.aws_gpu_fleets or settings.aws_inferentia_fleets)
    ):
        return {}
    discovery = AwsDiscovery(regions=[aws_region], tags={"Environment": settings.environment})
    out: dict[str, Any] = {"fleet_discovery": ScrapeSettings(discovery=discovery)}
    if obs.discovery_role_arn:
        out["prometheus_service_account_annotations"] = {"eks.amazonaws.com/role-arn": obs.discovery_role_arn}
    return out
