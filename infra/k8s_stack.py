"""The stack's Kubernetes part: vLLM pools on its EKS cluster (`inference-infra:kubernetesPools`).

Each pool is a KubernetesServingPool planned once (`pool_plans`, read by validation, deployment and
the observability part through `plans.planned_pools`): weights from the stack's modelStore bucket, the
engine image through egress.imageMirrors, scraped by the stack's GpuObservability Prometheus (and
scaled by KEDA on it when elastic), its nodes made from its plan when the section asks
(`eksNodeGroups` in awsNetwork's subnets, or `karpenter`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, KubernetesPoolSettings, StackSettings
from inference_infra.infra.pools import PlannedPool

_SECTION = f"{NAMESPACE}:kubernetesPools"


@dataclass(frozen=True)
class KeptPool:
    where: str  # the pool's config key, inference-infra:kubernetesPools[i]
    config: KubernetesPoolSettings
    args: Any  # KubernetesServingPoolArgs
    plan: Any  # FleetPlan


_KEPT: dict[int, tuple[StackSettings, list[KeptPool]]] = {}


def pool_args(settings: StackSettings, config: KubernetesPoolSettings) -> Any:
    """The pool's KubernetesServingPoolArgs: its settings plus what the stack wires."""
    from inference_infra.components.aws.fleet_args import S3Weights
    from inference_infra.components.catalog import AcceleratorFamily, Cloud
    from inference_infra.components.images import VLLM_OPENAI, mirrored
    from inference_infra.components.k8s.node_capacity_args import NodeSubnet
    from inference_infra.components.k8s.serving_pool_args import KubernetesCluster, PrometheusRef

    weights = None
    if config.model_prefix is not None and settings.model_store is not None:
        weights = S3Weights(
            bucket_name=settings.model_store.bucket_name,
            prefix=config.model_prefix,
            manifest_sha256=config.manifest_sha256,
        )
    obs = settings.observability
    prometheus = PrometheusRef(namespace=obs.namespace, release=f"{obs.name}-kps") if obs else None
    image = None
    if config.accelerator is AcceleratorFamily.NVIDIA_GPU:
        image = mirrored(VLLM_OPENAI.by_digest, dict(settings.egress.image_mirrors))
    nodes: Any = None
    if config.eks_node_groups is not None:
        network = settings.aws_network
        subnets = [
            NodeSubnet(id=s.id, availability_zone=s.availability_zone)
            for s in (network.subnets if network is not None else [])
        ]
        nodes = config.eks_node_groups.to_args(
            cluster_name=config.eks_node_groups.cluster_name,
            subnets=subnets,
            security_group_ids=list(config.eks_node_groups.security_group_ids),
            node_role_arn=config.eks_node_groups.node_role_arn,
        )
    elif config.karpenter is not None:
        nodes = config.karpenter.to_args()
    return config.to_args(
        cluster=KubernetesCluster(
            cloud=Cloud.AWS,
            namespace=config.namespace,
            kube_context=config.kube_context,
            oidc_provider_arn=config.eks_oidc_provider_arn,
        ),
        weights=weights,
        prometheus=prometheus,
        environment=settings.environment,
        image=image,
        nodes=nodes,
    )


def pool_plans(settings: StackSettings) -> list[KeptPool]:
    """Every pool's plan, made once per stack settings."""
    from inference_infra.components.k8s.pool_profile import plan_pool

    kept = _KEPT.get(id(settings))
    if kept is not None and kept[0] is settings:
        return kept[1]
    pools = []
    for i, config in enumerate(settings.kubernetes_pools):
        args = pool_args(settings, config)
        pools.append(KeptPool(f"{_SECTION}[{i}]", config, args, plan_pool(config.name, args)))
    if len(_KEPT) >= 16:
        _KEPT.pop(next(iter(_KEPT)))
    _KEPT[id(settings)] = (settings, pools)
    return pools


def planned_pools(settings: StackSettings) -> list[PlannedPool]:
    """Every pool as it planned itself, for the endpoints and observability parts."""
    from inference_infra.components.catalog import AcceleratorFamily

    found = []
    for kept in pool_plans(settings):
        plan, config = kept.plan, kept.config
        resolution = plan.resolution
        resolved = resolution is not None and not resolution.problems
        choice = resolution.choice if resolution is not None else None
        found.append(
            PlannedPool(
                name=config.name,
                cloud="aws",
                accelerator="neuron" if config.accelerator is AcceleratorFamily.AWS_NEURON else "nvidia",
                machine=plan.machine if resolved else None,
                nodes=plan.machines,  # a replica over hosts is that many nodes
                serving=plan.serving,
                serves_model=config.model is not None,
                latency=config.latency.value if config.latency is not None else "interactive",
                usd_per_million_tokens=choice.option.usd_per_million_tokens if choice else None,
                model=kept.args.model,
                plan=plan,
                kubernetes=True,
            )
        )
    return found


def _key(kept: KeptPool, name: str) -> str:
    """A component input ('nodes.security_group_ids', 'weights.prefix') as its config key."""
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
    if camel.startswith("nodes."):
        section = "eksNodeGroups" if kept.config.eks_node_groups is not None else "karpenter"
        camel = section + camel.removeprefix("nodes")
    for old, new in (("weights.prefix", "modelPrefix"), ("weights.manifestSha256", "manifestSha256")):
        camel = camel.replace(old, new)
    camel = camel.replace("cluster.oidcProviderArn", "eksOidcProviderArn")
    return f"{kept.where}.{camel}"


def validate(settings: StackSettings) -> list[Problem]:
    from inference_infra.components.k8s.serving_pool import pool_problems

    problems: list[Problem] = []
    if settings.observability is None:
        problems.append(
            Problem(
                f"{NAMESPACE}:observability",
                None,
                "is required by kubernetesPools: the stack's Prometheus scrapes the pools and feeds KEDA",
            )
        )
    names = [p.name for p in settings.kubernetes_pools]
    fleets = {f.name for f in [*settings.aws_gpu_fleets, *settings.aws_inferentia_fleets]}
    for kept in pool_plans(settings):
        config = kept.config
        if names.count(config.name) > 1 or config.name in fleets:
            problems.append(
                Problem(f"{kept.where}.name", config.name, "must be unique among the stack's pools")
            )
        if config.model_prefix is not None and settings.model_store is None:
            problems.append(Problem(f"{kept.where}.modelPrefix", config.model_prefix, "needs modelStore"))
        if config.eks_node_groups is not None and config.karpenter is not None:
            problems.append(
                Problem(f"{kept.where}.karpenter", "set", "and eksNodeGroups are two node capacities: one")
            )
        if config.eks_node_groups is not None and (
            settings.aws_network is None or not settings.aws_network.subnets
        ):
            problems.append(
                Problem(
                    f"{kept.where}.eksNodeGroups",
                    "set",
                    "needs awsNetwork.subnets (the cluster's private subnets, with their zones)",
                )
            )
        problems += [
            Problem(_key(kept, p.input), p.value, p.allowed)
            for p in pool_problems(config.name, kept.args, kept.plan)
        ]
    return problems


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.k8s.serving_pool import KubernetesServingPool

    outputs: dict[str, Any] = {}
    for kept in pool_plans(settings):
        pool = KubernetesServingPool(kept.config.name, kept.args, plan=kept.plan)
        outputs[f"{kept.config.name}KubernetesService"] = f"{pool.namespace}/{pool.service_name}"
    return outputs
