"""A serving pool replica over several GPU hosts: what its LeaderWorkerSet group adds (pure).

When the plan's engine spans hosts (`FleetPlan.hosts_per_replica` > 1: tensor parallel over one host's
GPUs, pipeline parallel across hosts), the pool renders a LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`,
LWS v0.10.0: the CRD vendored in tests/k8s_schemas, its Go types in api/leaderworkerset/v1/
leaderworkerset_types.go read 2026-12-02) instead of a Deployment: one group per replica, `size` =
hosts, a leader pod serving the API and hosts - 1 worker pods. pool_manifests.py renders it; this
module holds what is particular to a group: LWS's labels and environment, the engine's multi-node
flags, the leader's start script, the ports the group's pods use between themselves.

The engine across hosts. The pinned vLLM 0.28.0 image carries no Ray: the wheel's METADATA has no
`ray` requirement or extra (vllm-0.28.0-cp38-abi3-manylinux_2_28_x86_64.whl, sha256 addb0ffd...,
read 2026-12-02; Ray left vLLM's dependencies in 0.19, kubernetes-sigs/lws issue 835 and
ai-dynamo/dynamo PR 8515), so LWS's own vLLM example (docs/examples/vllm/GPU/lws.yaml at v0.10.0, which
starts a Ray cluster with vLLM's examples/online_serving/multi-node-serving.sh) would fail on it with
`ray: not found`. vLLM 0.28.0 serves one model across nodes without Ray through its multiprocessing
executor: every host runs `vllm serve` with the same model flags and `--nnodes <hosts> --node-rank <i>
--master-addr <leader> --master-port <port>`, the workers with `--headless` (vllm/config/parallel.py:
nnodes, node_rank, master_addr, master_port 29501 by default; vllm/entrypoints/cli/serve.py
run_headless: "Run headless workers (for multi-node PP/TP)"). The leader's engine waits for every
rank at torch.distributed's rendezvous, bounded by `--distributed-timeout-seconds` (ParallelConfig.
distributed_timeout_seconds, passed to init_process_group; PyTorch's default 600 s for NCCL otherwise):
that is the group's bounded wait, in the engine itself, not a shell loop.
"""

from __future__ import annotations

import math
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.serving.cold_start import ColdStart
from inference_infra.components.serving.units import API_KEY_SCRIPT

# LWS v0.10.0 api/leaderworkerset/v1/leaderworkerset_types.go: the labels it puts on every pod of a set
# and the environment it adds to every container.
LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_VERSION = "v0.10.0"
SET_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # SetNameLabelKey: the set's name, on each pod
# The set's own name: the pool's name and this suffix. LWS names its headless Service after the set
# (subdomainPolicy Shared, the default: pkg/controllers/leaderworkerset_controller.go 214-215) and
# creates it only when no Service of that name exists (pkg/utils/controller/controller_utils.go,
# CreateHeadlessServiceIfNotExists). A set named like the pool would meet the pool's own ClusterIP
# Service: no headless Service, so no DNS record for LWS_LEADER_ADDRESS (<set>-<group>.<set>.<namespace>,
# pkg/utils/pod/pod_utils.go AddLWSVariables), workers that never find their leader, and a group that
# never serves (or, LWS first, the pool's Service refused as existing). A pool name is at most 40
# characters: the set's 46, its StatefulSets' <set>-<group> within the 52 a revision-hash label allows.
SET_SUFFIX = "-group"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"  # WorkerIndexLabelKey: "0" is the leader
# GroupUniqueHashLabelKey: one value per group, put on the leader by LWS's pod webhook at its creation
# (pkg/webhooks/pod_webhook.go 116-120) and copied to its workers (pkg/controllers/pod_controller.go 405).
GROUP_KEY_LABEL = "leaderworkerset.sigs.k8s.io/group-key"
ZONE_KEY = "topology.kubernetes.io/zone"
LEADER_INDEX = "0"
LEADER_ADDRESS_ENV = "LWS_LEADER_ADDRESS"  # LwsLeaderAddress: the leader pod's DNS name
WORKER_INDEX_ENV = "LWS_WORKER_INDEX"  # LwsWorkerIndex: the pod's index in its group
# RecreateGroupOnPodRestart: a pod's restart recreates its whole group (a pipeline stage lost is the
# replica lost: NCCL communicators cannot take a new rank in). The default of LWS's types, said here.
RESTART_POLICY = "RecreateGroupOnPodRestart"
# LeaderCreated (the default): the workers are created with the leader. LeaderReady would create them only
# once the leader is Ready, but the leader becomes Ready only when its engine serves, which needs the
# workers: LeaderReady would never start a group.
STARTUP_POLICY = "LeaderCreated"

# vLLM 0.28.0 ParallelConfig.master_port's default: the leader's torch.distributed TCPStore.
MASTER_PORT = 29501
# The other connections between a group's pods all bind port 0, so the kernel hands out a port from its
# ephemeral range: NCCL's bootstrap and socket transport, Gloo's CPU groups, and vLLM's cross-node
# message queue (vllm/distributed/device_communicators/shm_broadcast.py binds its remote socket to
# tcp://<ip>:0). Linux's default net.ipv4.ip_local_port_range is 32768-60999 (Documentation/networking/
# ip-sysctl.rst), which a pod's network namespace keeps unless the pod sets the sysctl (this one does not).
EPHEMERAL_PORTS = (32768, 60999)
# The least the leader's engine waits for its workers at the rendezvous: PyTorch's NCCL default.
MIN_JOIN_SECONDS = 600

# The leader's start: one log line saying what it waits for (every value from the pod's environment, set
# by the renderer or by LWS), then the VM units' key script (the key from its file into the engine's
# environment, then `exec "$@"`: the engine and its arguments as the container's args, never re-parsed).
GROUP_HOSTS_ENV = "INFERENCE_GROUP_HOSTS"
GROUP_JOIN_ENV = "INFERENCE_GROUP_JOIN_SECONDS"
LEADER_SCRIPT = (
    'echo "inference-infra: leader of a group of ${INFERENCE_GROUP_HOSTS} hosts; vllm serve waits up to '
    "${INFERENCE_GROUP_JOIN_SECONDS}s for its workers at port ${INFERENCE_GROUP_PORT} "
    '(a timeout restarts the group)" >&2 && ' + API_KEY_SCRIPT
)
# Not torch's MASTER_PORT: no variable of torch.distributed's env:// rendezvous is set here.
GROUP_PORT_ENV = "INFERENCE_GROUP_PORT"


def join_seconds(cold_start: ColdStart | None) -> int:
    """How long the leader's engine waits for its workers: the slowest whole cold start (a worker's node
    may still be booting, pulling the image and fetching the weights when the leader is ready), in whole
    minutes, at least MIN_JOIN_SECONDS."""
    if cold_start is None:
        return MIN_JOIN_SECONDS
    slowest = sum(s.slowest for s in cold_start.stages())
    return max(MIN_JOIN_SECONDS, int(math.ceil(slowest / 60 - 1e-9) * 60))


def multi_node_args(hosts: int, *, leader: bool, timeout_seconds: int) -> list[str]:
    """The flags each host's `vllm serve` adds to the plan's: the group's size, this pod's rank and the
    leader's address (Kubernetes expands $(VAR) from the container's environment, which LWS fills; no
    shell reads them), the workers headless (no API server)."""
    args = [
        "--nnodes",
        str(hosts),
        "--node-rank",
        LEADER_INDEX if leader else f"$({WORKER_INDEX_ENV})",
        "--master-addr",
        f"$({LEADER_ADDRESS_ENV})",
        "--master-port",
        str(MASTER_PORT),
        "--distributed-timeout-seconds",
        str(timeout_seconds),
    ]
    return args if leader else [*args, "--headless"]


def group_environment(hosts: int, timeout_seconds: int) -> list[dict[str, str]]:
    """The leader script's values (plain integers)."""
    return [
        {"name": GROUP_HOSTS_ENV, "value": str(hosts)},
        {"name": GROUP_JOIN_ENV, "value": str(timeout_seconds)},
        {"name": GROUP_PORT_ENV, "value": str(MASTER_PORT)},
    ]


def set_name(name: str) -> str:
    """The LeaderWorkerSet's name (and so its headless Service's and its pods' subdomain)."""
    return f"{name}{SET_SUFFIX}"


def leader_labels() -> dict[str, str]:
    """What the Service, the PodMonitor and the scaler's selector add to the pool's: leaders only (the
    API and vLLM's metrics live on the leader)."""
    return {WORKER_INDEX_LABEL: LEADER_INDEX}


def group_peer(name: str) -> dict[str, Any]:
    """The pods of this pool's set (same namespace). Narrower is not possible with a fixed selector: the
    group's own label (leaderworkerset.sigs.k8s.io/group-key) is a hash LWS computes per group."""
    return {"podSelector": {"matchLabels": {SET_NAME_LABEL: set_name(name)}}}


def group_zone_affinity(name: str) -> dict[str, Any]:
    """A group's pods prefer their group's zone: every token crosses each pipeline stage's boundary, and
    across zones that is a zone hop of latency and a transfer billed both ways. `matchLabelKeys` takes the
    group key's value from the pod being scheduled (the API server merges it into the selector at the
    pod's creation, after the mutating webhook that sets it: Kubernetes 1.31+, beta and on by default,
    KEP-3633), so a fixed template names "this pod's group". Preferred, not required: a node group over
    several zones cannot be told which zone to grow (Cluster Autoscaler FAQ), and a worker pending for
    ever would only time its leader out and recreate the group."""
    return {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {SET_NAME_LABEL: set_name(name)}},
                        "matchLabelKeys": [GROUP_KEY_LABEL],
                        "topologyKey": ZONE_KEY,
                    },
                }
            ]
        }
    }


# GKE Dataplane V2 enforces NetworkPolicy with Cilium (GKE docs, "GKE Dataplane V2", read 2026-12-02),
# and Cilium before 1.16 does not enforce `endPort`: it kept `port` alone and dropped the range
# (cilium/cilium#28684, 2023-10-18: "silently accepts k8s networkpolicy with endPort without implementing
# it"; its `parsePorts` in pkg/k8s/network_policy.go reads Port and Protocol only), then a change merged
# in 2023-10 stopped processing a policy that has one (cilium/cilium#28704's release note: "will not
# process or enforce"); port ranges came in 1.16.0
# (cilium/cilium#32807, in v1.16.0-rc.1's notes, cilium/cilium#33463, 2024-06-28). GKE does not publish
# which Cilium release a cluster version's anetd carries, so a GKE group cannot count on the range: its
# pods open every TCP port to one another instead (a port left out is every port, which Cilium has always
# read as its port 0, any port). Still only between the pods of the pool's own set, TCP only.
GKE_GROUP_PORTS: tuple[dict[str, Any], ...] = ({"protocol": "TCP"},)


def group_ports(cloud: Cloud = Cloud.AWS) -> list[dict[str, Any]]:
    """The ports a group's pods reach each other on: the rendezvous and the ephemeral range; on GKE
    every TCP port (GKE_GROUP_PORTS: its Dataplane V2 may not enforce `endPort`)."""
    if cloud is Cloud.GCP:
        return [dict(port) for port in GKE_GROUP_PORTS]
    low, high = EPHEMERAL_PORTS
    return [
        {"protocol": "TCP", "port": MASTER_PORT},
        {"protocol": "TCP", "port": low, "endPort": high},
    ]
