"""A Kubernetes serving pool as a target of the one fleet pipeline (components/fleet/plan.py).

`plan_pool(name, args)` runs the shared skeleton with `KubernetesPoolProfile`: the pool's own inputs
(serving_pool_args.py), the capacity modes a cluster's nodes are bought in, the machine (the capacity
planner's pick or the one given; one host per replica, or on NVIDIA GPUs several identical hosts when
one does not hold the model or `hosts_per_replica` says so: a LeaderWorkerSet group), the weights' pin,
the elastic checks a KEDA ScaledObject and the HPA under it can honour. The targets are "k8s-eks-gpu",
"k8s-eks-inferentia", "k8s-gke-gpu" and "k8s-gke-tpu" (PoolTarget).

On a cluster a machine is a node of the pool's node capacity; each node runs one pod per engine the
planner placed on it, and each pod owns its engine's accelerators (`pods_per_machine`). A replica over
several hosts is one engine whose pods (one leader, hosts - 1 workers) each own one node's GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.aws.fleet_args import weights_problems as s3_weights_problems
from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    accelerator,
    find_instance_type,
    instance_types,
)
from inference_infra.components.errors import Problem, close_matches
from inference_infra.components.fleet import (
    CapacityCounts,
    CapacityMode,
    FleetServing,
    elastic_problems,
)
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.fleet_common import weights_problems as gcs_weights_problems
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.k8s.pool_lws import EPHEMERAL_PORTS, MASTER_PORT
from inference_infra.components.k8s.serving_pool_args import (
    KubernetesServingPoolArgs,
    ModelCache,
    ModelCacheKind,
    PoolTarget,
    serving_pool_problems,
)
from inference_infra.components.planner.servable import (
    ENGINE_SUPPORT,
    MAX_REPLICA_HOSTS,
    MULTI_HOST_FAMILIES,
    MULTI_HOST_FLAGS,
)
from inference_infra.components.serving.cold_start import WeightSource
from inference_infra.components.serving.flags import engine_args, option_names
from inference_infra.components.tagging import is_production, registered_cost_tags

# The modes a cluster's node capacity is bought in (EKS managed node groups and Karpenter: on-demand,
# spot, capacity reservations; GKE node pools: on-demand, spot, reservations). GKE's older preemptible
# VMs are spot's predecessor.
K8S_CAPACITY_MODES = frozenset({CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND})
K8S_WHY_NOT = {
    CapacityMode.PREEMPTIBLE: "preemptible is the older spare capacity; node pools buy it as spot (use spot)",
}
# The HPA KEDA drives takes a stabilization window of at most one hour
# (autoscaling/v2 HPAScalingRules.stabilizationWindowSeconds: "must be greater than or equal to zero and
# less than or equal to 3600 (one hour)", kubernetes/api autoscaling/v2/types.go).
MAX_STABILIZATION_SECONDS = 3600
PRODUCTION_PRIORITY = 100_000
DEFAULT_PRIORITY = 1_000


def pool_environment(args: KubernetesServingPoolArgs) -> str | None:
    """The pool's environment: its own, else the stack's registered Environment cost tag."""
    if args.environment is not None:
        return args.environment
    tags = registered_cost_tags()
    return tags.environment if tags is not None else None


def pool_is_production(args: KubernetesServingPoolArgs) -> bool:
    """Production unless an environment says otherwise: an unnamed environment never scales to zero."""
    environment = pool_environment(args)
    return environment is None or is_production(environment)


def pods_per_machine(plan: FleetPlan) -> int:
    """Pods a node of the planned machine runs: one per engine (tensor-parallel group)."""
    return plan.engines.engines if plan.engines is not None else 1


def _weight_source(args: KubernetesServingPoolArgs) -> WeightSource:
    if isinstance(args.weights, ModelCache):
        return WeightSource.EFS if args.weights.kind is ModelCacheKind.EFS else WeightSource.FILESTORE
    return WeightSource.S3 if args.cluster.cloud is Cloud.AWS else WeightSource.GCS


@dataclass(frozen=True)
class KubernetesPoolProfile:
    """What a Kubernetes pool contributes to the one fleet skeleton: its inputs, node capacity modes,
    one-host replicas, its weights' pin and the elastic checks of a KEDA ScaledObject."""

    target: PoolTarget
    weight_source: WeightSource
    default_mode: CapacityMode = CapacityMode.SPOT
    machine_key: str = "machine"
    weights_rule: str = "need weights (S3Weights, GcsWeights or a ModelCache) to serve"

    @property
    def name(self) -> str:
        return self.target.value

    @property
    def cloud(self) -> Cloud:
        return self.target.cloud

    @property
    def family(self) -> AcceleratorFamily:
        return self.target.family

    def key(self, name: str) -> str:
        return name

    def zone(self, args: KubernetesServingPoolArgs) -> str | None:
        return None  # a pool spreads over its node capacity's zones

    def subject(self, name: str) -> str:
        return f"Kubernetes pool {name!r}"

    def input_problems(self, name: str, args: KubernetesServingPoolArgs, zone: str | None) -> list[Problem]:
        return (
            serving_pool_problems(name, args) + self._multi_host_problems(args) + self._hosts_problems(args)
        )

    def _hosts_problems(self, args: KubernetesServingPoolArgs) -> list[Problem]:
        """hosts_per_replica: NVIDIA GPU pools only, at most MAX_REPLICA_HOSTS."""
        hosts = args.hosts_per_replica
        if hosts is None or hosts == 1:
            return []
        if self.family not in MULTI_HOST_FAMILIES:
            return [Problem("hosts_per_replica", hosts, replica_hosts_refusal(self.target))]
        if hosts > MAX_REPLICA_HOSTS:
            return [
                Problem(
                    "hosts_per_replica",
                    hosts,
                    f"must be 1 to {MAX_REPLICA_HOSTS}: every host past that adds a pipeline stage (an "
                    "inter-host hop per token) and a pod whose loss restarts the whole group, for a model "
                    "the catalog's 8-GPU machines already hold on 2 to 4",
                )
            ]
        return []

    def _multi_host_problems(self, args: KubernetesServingPoolArgs) -> list[Problem]:
        """A named machine of the pool's family spanning hosts: refused here, saying why a pool renders
        no LeaderWorkerSet for it (the planner, not asked then, would refuse it without that)."""
        item = _multi_host(self.target, args.machine)
        return [Problem("machine", args.machine, multi_host_refusal(item, self.target.cloud))] if item else []

    def capacity_offer(self, args: KubernetesServingPoolArgs) -> fleet_plan.CapacityOffer:
        return fleet_plan.CapacityOffer(
            inputs=args, supported=K8S_CAPACITY_MODES, why_not=K8S_WHY_NOT, reservation_slots=args.reserved
        )

    def machine_query(
        self, args: KubernetesServingPoolArgs, counts: CapacityCounts, zone: str | None
    ) -> fleet_plan.MachineQuery | None:
        if args.model is None:
            return None  # resolve says a pool serves a model
        if _multi_host(self.target, args.machine) is not None:
            return None  # input_problems refused it
        hosts = args.hosts_per_replica
        if self._hosts_problems(args) or (hosts is not None and hosts < 1):
            return None  # input_problems (or the bounds check) refused hosts_per_replica
        return fleet_plan.MachineQuery(
            args.machine,
            spot_only=counts.modes() == [CapacityMode.SPOT],
            region=args.cluster.region,
            # A catalog machine of one host: the TPU build serves no multi-host slice (multi_host_refusal).
            max_hosts=1,
            # NVIDIA GPUs: a replica may span identical machines (a LeaderWorkerSet group); the fewest that
            # hold the model unless hosts_per_replica names them. TPU and Neuron: one host.
            hosts_per_replica=args.hosts_per_replica if self.family in MULTI_HOST_FAMILIES else 1,
            max_replica_hosts=MAX_REPLICA_HOSTS if self.family in MULTI_HOST_FAMILIES else 1,
        )

    def resolve(
        self, args: KubernetesServingPoolArgs, machine: str | None, planned: bool
    ) -> tuple[str | None, Any, list[Problem]]:
        if args.model is None:
            return None, None, [Problem("model", None, "is required: a Kubernetes pool serves a model")]
        if machine is None:
            return None, None, []  # the machine choice named the problem
        return machine, None, machine_problems(self.target, machine)

    def reservation_problems(
        self, args: KubernetesServingPoolArgs, counts: CapacityCounts, zone: str | None, machine: str | None
    ) -> list[Problem]:
        return []  # the node capacity holds the reservation (components/k8s/node_capacity*.py)

    def node_machine(
        self, args: KubernetesServingPoolArgs, machine: str | None, shape: Any, problems: list[Problem]
    ) -> str | None:
        return machine if machine is not None and not problems else None

    def weights(self, args: KubernetesServingPoolArgs, subject: str) -> tuple[bool, str | None]:
        if args.weights is not None:
            return True, None
        return (
            False,
            f"{subject}: no weights given, so no engine is planned "
            "(give S3Weights, GcsWeights or a ModelCache)",
        )

    def given_serving(self, args: KubernetesServingPoolArgs, machine: str) -> FleetServing | None:
        return None

    def serving_notes(self, subject: str, serving: FleetServing | None) -> list[str]:
        return [serving.cold_start.note(subject)] if serving is not None else []

    def weights_problems(self, args: KubernetesServingPoolArgs) -> list[Problem]:
        if isinstance(args.weights, S3Weights):
            return s3_weights_problems(args)  # type: ignore[arg-type]  # reads args.weights only
        if isinstance(args.weights, GcsWeights):
            return gcs_weights_problems(args)  # type: ignore[arg-type]  # reads args.weights only
        return []

    def checks(self, name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> list[Problem]:
        problems = []
        if args.weights is None and args.model is not None:
            problems.append(Problem("weights", None, "is required: a pod serves only weights it verified"))
        if plan.hosts_per_replica > 1 and args.model is not None:
            set_flags = [f for f in option_names(args.model.engine_args) if f in MULTI_HOST_FLAGS]
            if set_flags:
                problems.append(
                    Problem(
                        "model.engine_args",
                        ", ".join(set_flags),
                        f"are set by the pool for a replica over {plan.hosts_per_replica} hosts (pipeline "
                        "parallel size from the plan, each pod's node rank and the leader's address from "
                        f"the LeaderWorkerSet); leave {', '.join(MULTI_HOST_FLAGS)} out",
                    )
                )
        if args.elastic is None:
            return problems
        elastic = args.elastic
        if not plan.capacity_refused:  # a refused count already has its problem
            problems += elastic_problems(elastic, peak=plan.counts.total)
        if elastic.warm_pool_size:
            problems.append(
                Problem(
                    "elastic.warm_pool_size",
                    elastic.warm_pool_size,
                    "is not offered on Kubernetes: a stopped pod keeps nothing (its emptyDir goes with it); "
                    "leave it unset",
                )
            )
        if elastic.scale_in_cooldown_seconds > MAX_STABILIZATION_SECONDS:
            problems.append(
                Problem(
                    "elastic.scale_in_cooldown_seconds",
                    elastic.scale_in_cooldown_seconds,
                    f"must be at most {MAX_STABILIZATION_SECONDS}: it becomes the HPA's scale-down "
                    "stabilization window, which Kubernetes bounds at one hour",
                )
            )
        if elastic.scale_out_cooldown_seconds > MAX_STABILIZATION_SECONDS:
            problems.append(
                Problem(
                    "elastic.scale_out_cooldown_seconds",
                    elastic.scale_out_cooldown_seconds,
                    f"must be at most {MAX_STABILIZATION_SECONDS} (the HPA's scale-up window)",
                )
            )
        if elastic.min_size == 0 and pool_is_production(args):
            environment = pool_environment(args)
            problems.append(
                Problem(
                    "elastic.min_size",
                    0,
                    f"scales to zero only outside production (environment {environment!r}): a production "
                    "pool keeps at least one replica"
                    + ("" if environment is not None else "; set environment or register the cost tags"),
                )
            )
        if elastic.schedule is not None and elastic.schedule.off_hours_size == 0 and pool_is_production(args):
            problems.append(
                Problem(
                    "elastic.schedule.off_hours_size",
                    0,
                    "scales to zero only outside production: a production pool keeps at least one replica",
                )
            )
        return problems

    def scaling_inputs(self, args: KubernetesServingPoolArgs, plan: FleetPlan) -> fleet_plan.ScalingInputs:
        return fleet_plan.ScalingInputs(warm_pool=False)

    def scaler(self, name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> tuple[Any, list[str]]:
        return plan.scaling, []  # the KEDA ScaledObject reads the ScalingPlan itself (pool_manifests.py)

    def boot(self, name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> tuple[Any, list[Problem]]:
        return None, []  # the pod spec renders from the plan

    def notes(self, name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> list[str]:
        if plan.engines is None or plan.machine is None:
            return []
        engines = plan.engines
        hosts = plan.hosts_per_replica
        if hosts > 1:
            notes = [
                f"{self.subject(name)}: each replica is a LeaderWorkerSet group of {hosts} pods on {hosts} "
                f"{plan.machine} nodes (a leader serving the API and {hosts - 1} worker(s)), each pod with "
                f"{engines.tensor_parallel} GPU(s): tensor parallel {engines.tensor_parallel} per host, "
                f"pipeline parallel {hosts} across hosts; {plan.counts.total} replica(s) = "
                f"{plan.machines} nodes; every pod fetches and verifies the whole model folder "
                "and loads its own stage",
                f"{self.subject(name)}: every pod runs vllm serve "
                f"{' '.join(engine_args(engines, 0, '<model folder>')[2:])} with --nnodes {hosts} "
                "--node-rank <its index> --master-addr <the leader> (the workers --headless)",
            ]
        else:
            notes = [
                f"{self.subject(name)}: {pods_per_machine(plan)} pod(s) per {plan.machine} node, each with "
                f"{engines.tensor_parallel} accelerator(s) (tensor parallel {engines.tensor_parallel})"
            ]
        if args.cluster.cloud is Cloud.AWS:
            note = EKS_NETWORK_POLICY_NOTE.format(subject=self.subject(name))
            if hosts > 1:
                low, high = EPHEMERAL_PORTS
                group = f"a group's pods to each other on {MASTER_PORT} and {low}-{high}"
                note = note.replace("egress DNS and HTTPS)", f"egress DNS and HTTPS, {group})")
            notes.append(note)
        return notes


# EKS stores a NetworkPolicy but enforces it only when the VPC CNI runs its network policy agent,
# which is off by default: the vpc-cni add-on's configuration value enableNetworkPolicy "true"
# (docs.aws.amazon.com/eks/latest/userguide/cni-network-policy.html, read 2026-12-02).
EKS_NETWORK_POLICY_NOTE = (
    "{subject}: its NetworkPolicy (API port from the gateway only, metrics port from Prometheus only, "
    "egress DNS and HTTPS) is enforced on EKS only when the vpc-cni add-on runs with "
    'enableNetworkPolicy "true" in its configuration values; without it any pod reaches the engines'
)


def machine_problems(target: PoolTarget, machine: str) -> list[Problem]:
    """The machine is a catalog type of the pool's cloud and accelerator family, on one host."""
    item = find_instance_type(machine, target.cloud)
    known = [i.name for i in instance_types(target.cloud, target.family)]
    if item is None:
        hits = close_matches(machine, known, limit=4)
        hint = f"close matches: {', '.join(hits)}" if hits else f"e.g. {', '.join(known[:6])}"
        return [
            Problem(
                "machine",
                machine,
                f"is not a {target.cloud.value} {target.family.value} machine in the catalog; {hint}",
            )
        ]
    family = accelerator(item.accelerator).family
    if family is not target.family:
        return [
            Problem(
                "machine",
                machine,
                f"carries {family.value}, not {target.family.value}: set accelerator={family.value!r}",
            )
        ]
    if item.hosts > 1:
        return [Problem("machine", machine, multi_host_refusal(item, target.cloud))]
    return []


def _multi_host(target: PoolTarget, machine: str | None) -> Any:
    """The catalog's machine when it is of the pool's cloud and family and spans hosts, else None."""
    item = find_instance_type(machine, target.cloud) if machine else None
    if item is None or item.hosts <= 1 or accelerator(item.accelerator).family is not target.family:
        return None
    return item


# The pinned vLLM TPU build's engine source (engines.py: vLLM 0.29.1rc1.dev468 with tpu-inference at
# this commit, 2026-08-22), where its multi-host serving is read from.
TPU_INFERENCE_COMMIT = "b8692ff01fa191343836996c27a39dc95f008b88"


def multi_host_refusal(item: Any, cloud: Cloud) -> str:
    """Why a replica spanning hosts is refused, with where that was read. A LeaderWorkerSet could hold
    one (leader and workers on one slice's hosts), but the pinned TPU engine has no supported way to
    serve from it, so the pool renders none."""
    singles = [
        i.name
        for i in instance_types(cloud)
        if i.accelerator == item.accelerator and i.hosts == 1 and i.name != item.name
    ]
    pick = f"pick a single-host slice ({', '.join(singles)})" if singles else "pick a single-host machine"
    if accelerator(item.accelerator).family is not AcceleratorFamily.GOOGLE_TPU:
        return f"spans {item.hosts} hosts: the pinned engines serve a model on one host; {pick}"
    return (
        f"spans {item.hosts} hosts: the pool renders no LeaderWorkerSet because the pinned vLLM TPU "
        f"engine (vllm-project/tpu-inference {TPU_INFERENCE_COMMIT[:9]}) serves one model across hosts "
        "only as a Ray cluster, which its own LeaderWorkerSet example shows for TPU v7x alone (examples/"
        "offload/gke/benchmarks/multi-host/deploy-baseline.yaml: the leader starts the Ray head and runs "
        "`vllm serve --tensor-parallel-size <all chips>` with TPU_MULTIHOST_BACKEND=ray, each worker joins "
        "it, size = the slice's hosts, topology 2x2x2), and whose README feature table marks multi-host "
        f"failing (Flax) or untested (Torchax, default); {pick}"
    )


def replica_hosts_refusal(target: PoolTarget) -> str:
    """Why a TPU or Neuron pool's replica stays on one host, with where that was read."""
    if target.family is AcceleratorFamily.GOOGLE_TPU:
        return (
            "must be 1 on a TPU pool: the pinned vLLM TPU engine (vllm-project/tpu-inference "
            f"{TPU_INFERENCE_COMMIT[:9]}) marks serving across hosts failing (Flax) or untested (Torchax, "
            "default) in its README feature table, so the pool renders no LeaderWorkerSet for it; serve on "
            "a single-host slice"
        )
    support = ENGINE_SUPPORT[target.family]
    return (
        f"must be 1 on {target.family.value} pools: the pool renders a multi-host engine for NVIDIA GPUs "
        f"only (vLLM's multiprocessing executor across nodes); {support.engine} is served on one "
        f"instance's devices ({support.hosts_why}); pick a larger machine"
    )


def plan_pool(name: str, args: KubernetesServingPoolArgs) -> FleetPlan:
    """The pool's FleetPlan from the one skeleton (components/fleet/plan.py)."""
    return fleet_plan.plan_fleet(name, args, profile_of(args))


def profile_of(args: KubernetesServingPoolArgs) -> KubernetesPoolProfile:
    """The profile of the args' cloud and accelerator. With a cluster or accelerator of the wrong type,
    any profile: the skeleton's first step (type_problems, check_types) stops on the bad input."""
    try:
        return KubernetesPoolProfile(args.target, _weight_source(args))
    except (AttributeError, KeyError, TypeError):
        return KubernetesPoolProfile(PoolTarget.EKS_GPU, WeightSource.S3)


def priority_value(args: KubernetesServingPoolArgs) -> int:
    if args.priority is not None:
        return args.priority
    return PRODUCTION_PRIORITY if pool_is_production(args) else DEFAULT_PRIORITY
