"""Offline-plan answers for the GCP accelerator resources: the addresses they get.

A GPU VM gets an internal IP on its first interface, a TPU VM a network
endpoint per host, a Filestore instance its share's IP, a subnet its gateway,
all deterministic (derived from the resource's seed) and inside private
ranges, so programs that wire one into another (a fleet mounting the model
cache) plan the way they deploy.
"""

from __future__ import annotations

from ipaddress import ip_network
from typing import Any

from pulumi.runtime.mocks import MockResourceArgs

from inference_infra.components.offline_plan.mocks import MockContext


def _private_ip(seed: str, cidr: str = "10.0.0.0/8") -> str:
    block = ip_network(cidr, strict=False)
    n = int(seed[:8], 16) % max(block.num_addresses - 4, 1)
    return str(block[n + 2])


def _instance(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    nics = [dict(nic) for nic in args.inputs.get("networkInterfaces") or [{}]]
    for i, nic in enumerate(nics):
        nic.setdefault("networkIp", _private_ip(f"{seed}{i}"))
        nic.setdefault("name", f"nic{i}")
    return {"networkInterfaces": nics, "instanceId": str(int(seed[:12], 16)), "currentStatus": "RUNNING"}


def _tpu_vm(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    return {
        "networkEndpoints": [{"ipAddress": _private_ip(seed), "port": 8470}],
        "state": "READY",
        "health": "HEALTHY",
    }


def _filestore(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    networks = [dict(n) for n in args.inputs.get("networks") or [{}]]
    for net in networks:
        net.setdefault("ipAddresses", [_private_ip(seed, "10.200.0.0/16")])
    return {"networks": networks}


def _subnetwork(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    cidr = args.inputs.get("ipCidrRange") or "10.0.0.0/20"
    return {"gatewayAddress": str(ip_network(cidr, strict=False)[1])}


def _gcp_region_group_manager(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    """A regional managed instance group's instance group (what a backend service names), as the API
    forms it from the group's project, region and name."""
    project = args.inputs.get("project") or ctx.gcp_project
    name = args.inputs.get("name") or f"{args.name}-{seed[:7]}"
    region = args.inputs.get("region") or "us-central1"
    return {
        "instanceGroup": f"https://www.googleapis.com/compute/v1/projects/{project}/regions/{region}/"
        f"instanceGroups/{name}"
    }


def _gke_node_pool(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    """A GKE node pool's managed instance groups, one per zone it names (the region's first zone when
    it names none), shaped like the API's instanceGroupUrls."""
    project = args.inputs.get("project") if isinstance(args.inputs.get("project"), str) else ctx.gcp_project
    zones = args.inputs.get("nodeLocations")
    if not isinstance(zones, list) or not zones:
        location = args.inputs.get("location")
        zones = [
            location if isinstance(location, str) and location.count("-") == 2 else f"{ctx.gcp_region}-a"
        ]
    urls = [
        f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/instanceGroupManagers/"
        f"gke-{args.name[:20]}-{seed[:8]}-grp"
        for zone in zones
        if isinstance(zone, str)
    ]
    return {"instanceGroupUrls": urls, "managedInstanceGroupUrls": urls}


RESOURCE_HOOKS = {
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager": _gcp_region_group_manager,
    "gcp:compute/instance:Instance": _instance,
    "gcp:tpu/v2Vm:V2Vm": _tpu_vm,
    "gcp:filestore/instance:Instance": _filestore,
    "gcp:compute/subnetwork:Subnetwork": _subnetwork,
    "gcp:container/nodePool:NodePool": _gke_node_pool,
}
