"""Offline answers for the look-ups programs commonly make (merged into mocks.py at import).

Networks, zones, DNS zones, certificates, clusters: each answer is shaped like
the provider's (ids with the right prefix, ARNs with the account and region)
and derived from the call's arguments, so the same program plans the same way.
Zones come from the dated table in `catalog.zones`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inference_infra.components.catalog.zones import aws_zones, gcp_zones
from inference_infra.components.offline_plan.mocks import ACCOUNT_ID, GCP_PROJECT_NUMBER, MockContext, digest

EKS_VERSION = "1.33"  # EKS standard-support version assumed offline
GKE_VERSION = "1.33.5-gke.1201000"


def _key(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _availability_zones(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    table = aws_zones(ctx.aws_region)
    pairs = [
        (n, i)
        for n, i in zip(table.names, table.zone_ids, strict=True)
        if n not in (args.get("excludeNames") or []) and i not in (args.get("excludeZoneIds") or [])
    ]
    return {
        "names": [n for n, _ in pairs],
        "zoneIds": [i for _, i in pairs],
        "id": ctx.aws_region,
        "groupNames": [ctx.aws_region],
        "state": args.get("state"),
    }


def _availability_zone(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    table = aws_zones(ctx.aws_region)
    pairs = list(zip(table.names, table.zone_ids, strict=True))
    name, zone_id = next(
        (p for p in pairs if args.get("name") in (None, p[0]) and args.get("zoneId") in (None, p[1])),
        pairs[0],
    )
    return {
        "name": name,
        "zoneId": zone_id,
        "region": ctx.aws_region,
        "nameSuffix": name[len(ctx.aws_region) :],
        "state": "available",
        "zoneType": "availability-zone",
        "groupName": ctx.aws_region,
        "id": name,
    }


def _subnets(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    zones = aws_zones(ctx.aws_region).names
    ids = [f"subnet-0{digest(_key(args), z, length=16)}" for z in zones]
    return {"ids": ids, "id": ctx.aws_region}


def _vpcs(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {"ids": [f"vpc-0{digest(_key(args), length=16)}"], "id": ctx.aws_region}


def _security_group(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    ident = args.get("id") or f"sg-0{digest(_key(args), length=16)}"
    return {
        "id": ident,
        "name": args.get("name") or "default",
        "vpcId": args.get("vpcId") or "vpc-0offline",
        "arn": f"arn:aws:ec2:{ctx.aws_region}:{ACCOUNT_ID}:security-group/{ident}",
        "description": "offline",
        "tags": {},
    }


def _route53_zone(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    name = (args.get("name") or "example.com").rstrip(".")
    ident = args.get("zoneId") or f"Z{digest(name, length=20).upper()}"
    return {
        "id": ident,
        "zoneId": ident,
        "name": name,
        "arn": f"arn:aws:route53:::hostedzone/{ident}",
        "privateZone": bool(args.get("privateZone")),
        "nameServers": [f"ns-{i}.awsdns-{i:02d}.com" for i in (1, 2, 3, 4)],
        "resourceRecordSetCount": 2,
        "callerReference": "offline",
        "comment": "",
        "tags": {},
    }


def _certificate(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    domain = args.get("domain") or "example.com"
    arn = f"arn:aws:acm:{ctx.aws_region}:{ACCOUNT_ID}:certificate/{digest(domain, length=32)}"
    return {"arn": arn, "id": arn, "domain": domain, "status": "ISSUED", "keyTypes": ["RSA_2048"]}


def _eks_cluster(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = args.get("name") or "cluster"
    return {
        "name": name,
        "id": name,
        "arn": f"arn:aws:eks:{ctx.aws_region}:{ACCOUNT_ID}:cluster/{name}",
        "version": EKS_VERSION,
        "platformVersion": "eks.1",
        "status": "ACTIVE",
        "endpoint": f"https://{digest(name, length=32).upper()}.gr7.{ctx.aws_region}.eks.amazonaws.com",
        "certificateAuthorities": [{"data": "b2ZmbGluZQ=="}],
        "identities": [
            {"oidcs": [{"issuer": f"https://oidc.eks.{ctx.aws_region}.amazonaws.com/id/OFFLINE"}]}
        ],
        "vpcConfig": {"vpcId": "vpc-0offline", "subnetIds": [], "securityGroupIds": []},
        "roleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{name}-cluster",
        "tags": {},
    }


def _eks_cluster_auth(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    return {"name": args.get("name"), "id": args.get("name"), "token": "k8s-aws-v1.offline"}


def _gcp_zones(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    region = args.get("region") or ctx.gcp_region
    return {
        "names": list(gcp_zones(region).names),
        "region": region,
        "project": ctx.gcp_project,
        "id": region,
    }


def _client_config(_: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {
        "project": ctx.gcp_project,
        "region": ctx.gcp_region,
        "zone": ctx.gcp_zone,
        "accessToken": "offline-token",
        "id": ctx.gcp_project,
    }


def _gcp_network(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    project = args.get("project") or ctx.gcp_project
    name = args.get("name") or "default"
    link = f"https://www.googleapis.com/compute/v1/projects/{project}/global/networks/{name}"
    return {
        "name": name,
        "project": project,
        "selfLink": link,
        "id": f"projects/{project}/global/networks/{name}",
    }


def _gcp_subnetwork(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    project = args.get("project") or ctx.gcp_project
    region = args.get("region") or ctx.gcp_region
    name = args.get("name") or "default"
    path = f"projects/{project}/regions/{region}/subnetworks/{name}"
    return {
        "name": name,
        "project": project,
        "region": region,
        "selfLink": f"https://www.googleapis.com/compute/v1/{path}",
        "id": path,
        "ipCidrRange": "10.128.0.0/20",
        "network": f"https://www.googleapis.com/compute/v1/projects/{project}/global/networks/default",
        "secondaryIpRanges": [],
    }


def _gke_versions(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {
        "latestMasterVersion": GKE_VERSION,
        "latestNodeVersion": GKE_VERSION,
        "defaultClusterVersion": GKE_VERSION,
        "validMasterVersions": [GKE_VERSION],
        "validNodeVersions": [GKE_VERSION],
        "releaseChannelDefaultVersion": {"REGULAR": GKE_VERSION, "STABLE": GKE_VERSION},
        "releaseChannelLatestVersion": {"REGULAR": GKE_VERSION, "STABLE": GKE_VERSION},
        "location": args.get("location") or ctx.gcp_region,
        "project": args.get("project") or ctx.gcp_project,
        "id": GKE_VERSION,
    }


def _gke_cluster(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = args.get("name") or "cluster"
    location = args.get("location") or ctx.gcp_region
    return {
        "name": name,
        "location": location,
        "project": args.get("project") or ctx.gcp_project,
        "id": f"projects/{ctx.gcp_project}/locations/{location}/clusters/{name}",
        "endpoint": "10.0.0.2",
        "masterVersion": GKE_VERSION,
        "masterAuths": [{"clusterCaCertificate": "b2ZmbGluZQ=="}],
        "resourceLabels": {},
        "selfLink": "",
        "network": "default",
        "projectNumber": GCP_PROJECT_NUMBER,
    }


INVOKE_HOOKS = {
    "aws:index/getAvailabilityZones:getAvailabilityZones": _availability_zones,
    "aws:index/getAvailabilityZone:getAvailabilityZone": _availability_zone,
    "aws:ec2/getSubnets:getSubnets": _subnets,
    "aws:ec2/getVpcs:getVpcs": _vpcs,
    "aws:ec2/getSecurityGroup:getSecurityGroup": _security_group,
    "aws:route53/getZone:getZone": _route53_zone,
    "aws:acm/getCertificate:getCertificate": _certificate,
    "aws:eks/getCluster:getCluster": _eks_cluster,
    "aws:eks/getClusterAuth:getClusterAuth": _eks_cluster_auth,
    "gcp:compute/getZones:getZones": _gcp_zones,
    "gcp:organizations/getClientConfig:getClientConfig": _client_config,
    "gcp:compute/getNetwork:getNetwork": _gcp_network,
    "gcp:compute/getSubnetwork:getSubnetwork": _gcp_subnetwork,
    "gcp:container/getEngineVersions:getEngineVersions": _gke_versions,
    "gcp:container/getCluster:getCluster": _gke_cluster,
}
