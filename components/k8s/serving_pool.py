"""KubernetesServingPool: vLLM on an EKS or GKE cluster, planned like a VM fleet, exposed as `.plan`.

The pool is a profile plus a renderer over the one fleet pipeline: `plan_pool` (pool_profile.py)
runs components/fleet/plan.py's skeleton, the renderers (pool_manifests.py) turn the FleetPlan into
plain objects, and this component registers them, all inputs checked first. Per pool:

- its cloud identity: on EKS an IAM role trusting the cluster's OIDC provider for this pool's service
  account only (IRSA), allowed to read the model's prefix and the API key's secret; on GKE a Google
  service account bound to that service account (Workload Identity), objectViewer on the model folder
  and secretAccessor on the key;
- a ServiceAccount (no API token), a ConfigMap with the shared verifier, the fetcher and the metrics
  proxy, a SecretProviderClass (the key as a file), a PriorityClass, a Deployment (a LeaderWorkerSet
  when a replica spans several GPU hosts: pool_lws.py), a
  PodDisruptionBudget, a ClusterIP Service, a NetworkPolicy; an HTTPRoute with a gateway, a KEDA
  ScaledObject when elastic, a PodMonitor with a Prometheus, a read-only PV/PVC with a cache.

With `nodes` the pool also makes the node capacity its pods land on (pool_nodes.py: EKS node groups,
a Karpenter NodePool or GKE node pools from its plan's machine and counts), built by
components/k8s/node_capacity*.py with the labels and taints of components/k8s/scheduling.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from typing import Any

import pulumi

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import Cloud
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.gcp.service_account import model_prefixes, prefix_condition
from inference_infra.components.k8s import pool_manifests as render
from inference_infra.components.k8s.pool_nodes import PoolGkeNodePools, pool_node_args, pool_node_problems
from inference_infra.components.k8s.pool_profile import plan_pool
from inference_infra.components.k8s.serving_pool_args import KubernetesServingPoolArgs
from inference_infra.components.validation import input_problems

__all__ = ["KubernetesServingPool", "pool_problems", "pool_scripts", "validate_serving_pool"]


def validate_serving_pool(name: str, args: KubernetesServingPoolArgs) -> list[Problem]:
    """Every problem with the pool's inputs (pure; what the component raises before registering)."""
    return input_problems(args, lambda a: pool_problems(name, a, plan_pool(name, a)))


def pool_problems(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> list[Problem]:
    """The plan's problems, then (once it plans) those of the node capacity it gives `nodes`."""
    if plan.problems:
        return list(plan.problems)
    return pool_node_problems(
        name, args.nodes, plan, args.cluster.cloud, args.cluster.region
    ) + node_disk_problems(args, plan)


def node_disk_problems(args: KubernetesServingPoolArgs, plan: FleetPlan) -> list[Problem]:
    """The pool's own nodes' disk holds what its pods write there (pool_manifests.node_disk_gib): the
    kubelet evicts a pod whose emptyDir outgrows the node's ephemeral storage, mid-download."""
    if args.nodes is None:
        return []
    needed = render.node_disk_gib(args, plan)
    key, size = (
        ("disk_size_gib", args.nodes.disk_size_gib)
        if isinstance(args.nodes, PoolGkeNodePools)
        else ("root_volume_gib", args.nodes.root_volume_gib)
    )
    if needed is None or size >= needed:
        return []
    weights = 0 if render.weights_source(args) is None else render.models_gib(plan)
    pods = render.pods_per_machine(plan)
    return [
        Problem(
            f"nodes.{key}",
            size,
            f"must be at least {needed}: each of the {pods} pod(s) on a {plan.machine} node fetches "
            f"{weights} GiB of weights onto it (an emptyDir), plus {render.NODE_DISK_RESERVE_GIB} GiB for "
            "the OS and the engine image",
        )
    ]


def pool_scripts() -> dict[str, str]:
    """The files the pod runs from its ConfigMap: the shared verifier (the VM nodes' file), the fetcher
    and the metrics-only proxy (the VM nodes' file)."""

    def read(package: str, file: str) -> str:
        return resources.files(f"inference_infra.components.{package}").joinpath(file).read_text()

    return {
        render.VERIFIER: read("models", "verify_weights.py"),
        render.FETCHER: read("k8s", "pool_fetch_weights.py"),
        render.METRICS_PROXY: read("serving", "metrics_proxy.py"),
    }


class KubernetesServingPool(pulumi.ComponentResource):
    """A vLLM serving pool on a Kubernetes cluster (see the module docstring)."""

    plan: FleetPlan

    def __init__(
        self,
        name: str,
        args: KubernetesServingPoolArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: FleetPlan | None = None,
    ) -> None:
        """`plan`: the pool's plan as a stack already made it (`plan_pool(name, args)`), not made again."""
        found: list[FleetPlan] = []

        def validate(a: KubernetesServingPoolArgs) -> Any:
            found.append(plan if plan is not None else plan_pool(name, a))
            return pool_problems(name, a, found[-1])

        raise_if_invalid(f"KubernetesServingPool {name!r}", input_problems(args, validate))
        super().__init__("inference-infra:k8s:KubernetesServingPool", name, None, opts)
        self.plan = found[-1]
        for note in self.plan.notes:
            pulumi.log.info(note, self)
        plan = self.plan
        child = self._cluster_provider(name, args)
        identity = self._identity(name, args)

        import pulumi_kubernetes as k8s

        self.service_name = name
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-sa", **_kw(render.service_account(name, args, plan, identity)), opts=child
        )
        self.scripts = k8s.core.v1.ConfigMap(
            f"{name}-scripts", **_kw(render.scripts_config_map(name, args, plan, pool_scripts())), opts=child
        )
        self.secret_provider_class = k8s.apiextensions.CustomResource(
            f"{name}-api-key",
            api_version="secrets-store.csi.x-k8s.io/v1",
            kind="SecretProviderClass",
            **render.secret_provider_class(name, args, plan),
            opts=child,
        )
        priority = render.priority_class(name, args, plan)
        self.priority_class = k8s.scheduling.v1.PriorityClass(f"{name}-priority", **_kw(priority), opts=child)
        waits: list[pulumi.Resource] = [self.service_account, self.scripts, self.secret_provider_class]
        waits.append(self.priority_class)
        self.cache_volume = self.cache_claim = None
        if render.weights_source(args) is None:
            self.cache_volume = k8s.core.v1.PersistentVolume(
                f"{name}-model-cache", **_kw(render.cache_volume(name, args, plan)), opts=child
            )
            self.cache_claim = k8s.core.v1.PersistentVolumeClaim(
                f"{name}-model-cache",
                **_kw(render.cache_claim(name, args, plan)),
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[self.cache_volume])
                ),
            )
            waits.append(self.cache_claim)
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=waits))
        workload = render.workload(name, args, plan, None)
        if isinstance(args.weights, S3Weights):
            prefix = args.weights.prefix.strip("/")
            spec: Any = pulumi.Output.from_input(args.weights.bucket_name).apply(
                lambda bucket: render.workload(name, args, plan, f"s3://{bucket}/{prefix}")["spec"]
            )
        else:
            spec = render.workload(name, args, plan, render.weights_source(args))["spec"]
        # The engine's workload: a Deployment, or a LeaderWorkerSet when a replica spans hosts (the
        # cluster runs the LWS controller, as it runs KEDA and the CSI driver).
        self.deployment: pulumi.CustomResource
        if render.is_group(plan):
            self.deployment = k8s.apiextensions.CustomResource(
                f"{name}-engine",
                api_version=render.lws.LWS_API_VERSION,
                kind="LeaderWorkerSet",
                metadata=workload["metadata"],
                spec=spec,
                opts=after,
            )
        else:
            self.deployment = k8s.apps.v1.Deployment(
                f"{name}-engine", metadata=workload["metadata"], spec=spec, opts=after
            )
        self.pod_disruption_budget = k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb", **_kw(render.pod_disruption_budget(name, args, plan)), opts=child
        )
        self.service = k8s.core.v1.Service(f"{name}-svc", **_kw(render.service(name, args, plan)), opts=child)
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol", **_kw(render.network_policy(name, args, plan)), opts=child
        )
        self.http_route = None
        if args.gateway is not None:
            self.http_route = k8s.apiextensions.CustomResource(
                f"{name}-route",
                api_version="gateway.networking.k8s.io/v1",
                kind="HTTPRoute",
                **render.http_route(name, args, plan),
                opts=child,
            )
        self.scaled_object = None
        if args.elastic is not None and plan.scaling is not None:
            self.scaled_object = k8s.apiextensions.CustomResource(
                f"{name}-scaler",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                **render.scaled_object(name, args, plan),
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[self.deployment])
                ),
            )
        self.pod_monitor = None
        if args.prometheus is not None:
            self.pod_monitor = k8s.apiextensions.CustomResource(
                f"{name}-monitor",
                api_version="monitoring.coreos.com/v1",
                kind="PodMonitor",
                **render.pod_monitor(name, args, plan),
                opts=child,
            )
        self.node_capacity = self._node_capacity(name, args)
        self.namespace = args.cluster.namespace
        # What the stack's monitoring reads of a pool (infra/observability_stack.py serving_args): its
        # latency class and its engines' --max-num-seqs, as the plan has them.
        self.latency = args.latency
        self.max_num_seqs = plan.engines.max_num_seqs if plan.engines is not None else None
        self.register_outputs(
            {
                "service_name": self.service_name,
                "namespace": self.namespace,
                "machine": plan.machine,
                "replicas": render.replicas(plan),
                "hosts_per_replica": plan.hosts_per_replica,
                "identity": identity,
                "latency": args.latency.value if args.latency is not None else None,
            }
        )

    # What `simulate --cwd` reads of a program's fleet (components/cli/simulate.py _program_pool), by the
    # VM fleets' names: the plan's ScalingPlan, serving (its cold start) and machine.
    @property
    def scaling_plan(self) -> Any:
        return self.plan.scaling

    @property
    def serving(self) -> Any:
        return self.plan.serving

    @property
    def instance_type(self) -> str | None:
        return self.plan.machine

    def _node_capacity(self, name: str, args: KubernetesServingPoolArgs) -> list[pulumi.ComponentResource]:
        """The pool's own nodes (`nodes`), from its plan: its machine and its counts per capacity mode.
        Karpenter's NodePool goes to the pool's cluster through the pool's Kubernetes provider."""
        if args.nodes is None:
            return []
        from inference_infra.components.k8s import node_capacity as nodes

        made: list[pulumi.ComponentResource] = []
        for node_name, node_args in pool_node_args(name, args.nodes, self.plan, args.cluster.region):
            opts = pulumi.ResourceOptions(parent=self)
            if self.provider is not None:
                opts = pulumi.ResourceOptions(parent=self, providers=[self.provider])
            component = {
                "EksNodeGroupsArgs": nodes.EksNodeGroups,
                "KarpenterNodesArgs": nodes.KarpenterNodes,
                "GkeNodePoolArgs": nodes.GkeNodePool,
            }[type(node_args).__name__]
            made.append(component(node_name, node_args, opts))
        return made

    def _cluster_provider(self, name: str, args: KubernetesServingPoolArgs) -> pulumi.ResourceOptions:
        """The Kubernetes children's options: a provider of their own with a kubeconfig or context."""
        import pulumi_kubernetes as k8s

        self.provider: k8s.Provider | None = None
        cluster = args.cluster
        if cluster.kubeconfig is None and cluster.kube_context is None:
            return pulumi.ResourceOptions(parent=self)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=pulumi.Output.secret(cluster.kubeconfig) if cluster.kubeconfig is not None else None,
            context=cluster.kube_context,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return pulumi.ResourceOptions(parent=self, provider=self.provider)

    def _identity(self, name: str, args: KubernetesServingPoolArgs) -> Any:
        """The pool's cloud identity (its role ARN or service account email), or None when it needs none."""
        if args.cluster.cloud is Cloud.AWS:
            return self._irsa(name, args)
        return self._workload_identity(name, args)

    def _irsa(self, name: str, args: KubernetesServingPoolArgs) -> Any:
        import pulumi_aws as aws

        cluster = args.cluster
        child = pulumi.ResourceOptions(parent=self)
        self.role = aws.iam.Role(
            f"{name}-irsa",
            assume_role_policy=json.dumps(irsa_trust(name, args)),
            description=f"inference-infra serving pool {cluster.namespace}/{name} (IRSA)",
            opts=child,
        )
        bucket = args.weights.bucket_name if isinstance(args.weights, S3Weights) else None
        policy = pulumi.Output.from_input(bucket).apply(lambda b: json.dumps(irsa_policy(args, b)))
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-irsa-read", role=self.role.id, policy=policy, opts=child
        )
        return self.role.arn

    def _workload_identity(self, name: str, args: KubernetesServingPoolArgs) -> Any:
        import pulumi_gcp as gcp

        cluster = args.cluster
        project = cluster.gcp_project
        child = pulumi.ResourceOptions(parent=self)
        self.google_service_account = gcp.serviceaccount.Account(
            f"{name}-gsa",
            account_id=google_account_id(name, cluster.namespace),
            display_name=f"inference-infra pool {cluster.namespace}/{name}",
            description="Reads the pool's model folder and API key (GKE Workload Identity)",
            project=project,
            opts=child,
        )
        member = self.google_service_account.member
        self.workload_identity_binding = gcp.serviceaccount.IAMMember(
            f"{name}-wi",
            service_account_id=self.google_service_account.name,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{cluster.workload_pool}[{cluster.namespace}/{render.service_account_name(name)}]",
            opts=child,
        )
        if isinstance(args.weights, GcsWeights):
            bucket = args.weights.bucket
            prefixes = model_prefixes(list(args.weights.uris))
            self.model_reader = gcp.storage.BucketIAMMember(
                f"{name}-model-reader",
                bucket=bucket,
                role="roles/storage.objectViewer",
                member=member,
                condition=prefix_condition(bucket, prefixes) if prefixes else None,
                opts=child,
            )
        secret = str(args.api_key_secret)
        self.api_key_reader = gcp.secretmanager.SecretIamMember(
            f"{name}-api-key-reader",
            secret_id=secret.split("/versions/")[0],
            role="roles/secretmanager.secretAccessor",
            member=member,
            opts=child,
        )
        return self.google_service_account.email


def _kw(body: dict[str, Any]) -> dict[str, Any]:
    """An object's top-level fields as the SDK's keyword arguments (globalDefault -> global_default)."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in body.items()}


def irsa_trust(name: str, args: KubernetesServingPoolArgs) -> dict[str, Any]:
    """The role's trust: the cluster's OIDC provider, for this pool's service account only."""
    cluster = args.cluster
    issuer = cluster.oidc_issuer
    subject = f"system:serviceaccount:{cluster.namespace}:{render.service_account_name(name)}"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": cluster.oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {f"{issuer}:sub": subject, f"{issuer}:aud": "sts.amazonaws.com"}
                },
            }
        ],
    }


def irsa_policy(args: KubernetesServingPoolArgs, bucket: str | None) -> dict[str, Any]:
    """Read-only: the model's prefix (GetObject, no listing: the fetcher reads only listed keys) and the
    API key's secret."""
    partition = args.cluster.aws_partition
    statements: list[dict[str, Any]] = []
    if bucket is not None and isinstance(args.weights, S3Weights):
        prefix = args.weights.prefix.strip("/")
        resource = (
            f"arn:{partition}:s3:::{bucket}/{prefix}/*" if prefix else f"arn:{partition}:s3:::{bucket}/*"
        )
        statements.append(
            {"Sid": "ReadModel", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": resource}
        )
    statements.append(
        {
            "Sid": "ReadApiKey",
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
            "Resource": secret_resource(str(args.api_key_secret)),
        }
    )
    if args.api_key_kms_key is not None:
        # A customer managed key: GetSecretValue decrypts with the caller's kms:Decrypt, only through
        # Secrets Manager in the secret's region (the kms:ViaService condition key).
        arn = str(args.api_key_secret).split(":")
        domain = "amazonaws.com.cn" if arn[1] == "aws-cn" else "amazonaws.com"
        statements.append(
            {
                "Sid": "DecryptApiKey",
                "Effect": "Allow",
                "Action": ["kms:Decrypt"],
                "Resource": args.api_key_kms_key,
                "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{arn[3]}.{domain}"}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


# A Secrets Manager ARN ends in the secret's name, a hyphen and six random characters Secrets Manager
# adds (botocore 1.44.8 data/secretsmanager/2017-10-17/service-2.json, SecretIdType's documentation).
_COMPLETE_SECRET_ARN = re.compile(r":secret:.+-[A-Za-z0-9]{6}$")


def secret_resource(secret: str) -> str:
    """The IAM resource of the API key's secret: its ARN as given when complete; a partial ARN (the name
    without the suffix) matches no real secret as it stands, so `-??????` stands for exactly the six
    characters of the suffix (never `*`, which would take `<name>-other` secrets too)."""
    return secret if _COMPLETE_SECRET_ARN.search(secret) else f"{secret}-??????"


def google_account_id(name: str, namespace: str) -> str:
    """6-30 characters, a letter first: the pool's name cut short and a digest of namespace/name."""
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:6]
    return f"k8s-{name[:19].rstrip('-')}-{digest}"
