"""Prometheus configuration for accelerator VMs outside Kubernetes (EC2 and GCE).

Which machines: the ones this project launches. Every accelerator instance
carries the `AutoShutdown` tag (GCP label `auto-shutdown`) from the stack's
cost-tag transform, so discovery keeps running instances that have that tag
key, narrowed by instance-type family from the catalog: dcgm-exporter (9400)
on NVIDIA families only, node exporter (9100) on all of them, and on request
neuron-monitor (8000) on Inferentia/Trainium families. Without the family filter an
Inferentia instance would show up as a dcgm-exporter target that is always
down. Stopped instances are left out, so the idle watchdog stopping a GPU
does not raise DcgmExporterDown.

Each target gets the same labels on both clouds: `cloud`, `instance` and
`node` (instance id on EC2, instance name on GCE), `instance_id`,
`instance_type` (the cost rules join prices on it), `zone`, and the cost tags
`cost_center`, `environment`, `owner`, `auto_shutdown`.

Prometheus needs `ec2:DescribeInstances` and `ec2:DescribeAvailabilityZones`
(EC2) or `compute.instances.list` (GCE, e.g. roles/compute.viewer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from inference_infra.components.catalog import AcceleratorFamily, Cloud, accelerator, instance_types
from inference_infra.components.errors import Problem
from inference_infra.components.monitoring.host_exporters import DCGM_EXPORTER_PORT, NODE_EXPORTER_PORT
from inference_infra.components.monitoring.rules import DCGM_JOB
from inference_infra.components.monitoring.serving import ENGINE_JOB, ENGINE_PORT
from inference_infra.components.naming import (
    is_aws_region,
    is_gcp_label_key,
    is_gcp_label_value,
    is_gcp_zone,
)
from inference_infra.components.tagging import (
    AUTO_SHUTDOWN,
    AWS_TAG_CHARACTERS,
    AWS_TAG_TEXT,
    COST_TAG_KEYS,
    gcp_label_key,
)

NODE_EXPORTER_JOB = "node-exporter"
NEURON_JOB, NEURON_PORT = "neuron-monitor", 8000

_GCP_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")
_AWS_TAG_KEY = re.compile(r"^[\w .:/=+\-@]{1,128}$")


@dataclass(frozen=True, kw_only=True)
class AwsDiscovery:
    regions: Sequence[str]
    tags: Mapping[str, str] = field(default_factory=dict)  # extra tag filters, e.g. Environment=prod
    role_arn: str | None = None  # assume this role to list instances (another account)


@dataclass(frozen=True, kw_only=True)
class GcpDiscovery:
    project: str
    zones: Sequence[str]
    labels: Mapping[str, str] = field(default_factory=dict)  # extra label filters, e.g. environment=prod


@dataclass(frozen=True, kw_only=True)
class StaticTargets:
    """Engine hosts no discovery lists, from a fleet's outputs: TPU VMs are not Compute Engine
    instances, so GCE discovery never returns them. Scraped on the settings' engine ports."""

    pool: str  # the fleet's name (the `pool` label)
    instance_type: str  # e.g. the TPU slice type ('v5litepod-4'): the cost rules join prices on it
    addresses: pulumi.Input[Sequence[pulumi.Input[str]]]  # the hosts' private IPs (an Output in a stack)
    cloud: str = "gcp"
    ports: Sequence[int] = ()  # its engines' ports; () = the settings' engine_ports


@dataclass(frozen=True, kw_only=True)
class ScrapeSettings:
    # One cloud, or several (a stack with AWS and GCP fleets): each gets its own jobs. With more than
    # one, job names carry the cloud ('dcgm-exporter-ec2') and a relabel rule sets `job` back to the
    # common name, so the rules and alerts see one job across clouds.
    discovery: AwsDiscovery | GcpDiscovery | Sequence[AwsDiscovery | GcpDiscovery]
    scrape_interval_seconds: int = 15
    node_exporter: bool = True
    # EC2 only: Inferentia/Trainium instances serving neuron-monitor's Prometheus output on 8000.
    # Off by default: this project's Inferentia fleets send Neuron metrics to CloudWatch instead.
    neuron_monitor: bool = False
    # vLLM's /metrics: 8000 for a node's first engine, 8001, 8002, ... for further tensor-parallel groups.
    engine_ports: Sequence[int] = (ENGINE_PORT,)
    rule_files: Sequence[str] = ()  # paths Prometheus reads rules from (e.g. `monitoring rules` output)
    # Engines on hosts discovery does not list (TPU VMs), as one static job relabelled to job `vllm`.
    static_engines: Sequence[StaticTargets] = ()
    # Each pool's engine ports, when known (a stack knows them; one engine per tensor-parallel group:
    # 8000, 8001, ...). Then every port gets a job of its own limited to the pools that listen on it
    # (EC2 `Pool` tag filter, GCE `fleet` label), relabelled to job `vllm`, and `engine_ports` is not
    # used: every engine is scraped, and no node is scraped on a port nothing listens on (a pool
    # without a model would otherwise be an engine target that is always down).
    pool_engine_ports: Mapping[str, Sequence[int]] = field(default_factory=dict)


def validate_scrape_settings(s: ScrapeSettings) -> list[Problem]:
    problems: list[Problem] = []
    if not isinstance(s.scrape_interval_seconds, int) or not 5 <= s.scrape_interval_seconds <= 300:
        problems.append(Problem("scrape interval", s.scrape_interval_seconds, "must be 5 to 300 seconds"))
    pool_ports = [p for ports in s.pool_engine_ports.values() for p in ports]
    for port in [*s.engine_ports, *pool_ports, *(p for t in s.static_engines for p in t.ports)]:
        if isinstance(port, bool) or not isinstance(port, int) or not 1024 <= port <= 65535:
            problems.append(Problem("engine port", port, "must be a port number 1024-65535"))
    problems += _duplicates("engine port", [str(p) for p in s.engine_ports])
    found = discoveries(s)
    if not found and not s.static_engines:
        problems.append(Problem("discovery", [], "must name one AWS or GCP discovery at least"))
    for t in s.static_engines:
        if not t.pool or '"' in t.pool or "\\" in t.pool:
            problems.append(Problem("static engine pool", t.pool, "must be a fleet name without quotes"))
        if t.cloud not in ("aws", "gcp"):
            problems.append(Problem(f"static engines {t.pool!r} cloud", t.cloud, "must be aws or gcp"))
    for d in found:
        problems += _validate_discovery(d)
    return problems


def discoveries(s: ScrapeSettings) -> list[AwsDiscovery | GcpDiscovery]:
    """The settings' discoveries as a list (one, or several)."""
    d = s.discovery
    return [d] if isinstance(d, (AwsDiscovery, GcpDiscovery)) else list(d)


def _validate_discovery(d: AwsDiscovery | GcpDiscovery) -> list[Problem]:
    problems: list[Problem] = []
    if isinstance(d, AwsDiscovery):
        if not d.regions:
            problems.append(Problem("region", None, "is required for EC2 discovery (one or more)"))
        for region in d.regions:
            if not is_aws_region(region):
                problems.append(Problem("region", region, "is not an AWS region name (like us-east-1)"))
        problems += _duplicates("region", d.regions)
        for key, value in d.tags.items():
            if not _AWS_TAG_KEY.fullmatch(key) or not value:
                problems.append(Problem(f"tag {key!r}", value, "must be KEY=VALUE with a valid EC2 tag key"))
            elif len(value) > 256 or not AWS_TAG_TEXT.fullmatch(value):
                # a filter value: '*' and '?' would be EC2 wildcards (widening discovery), a newline would
                # match nothing; the tags this library writes use only AWS's tag characters
                problems.append(
                    Problem(f"tag {key!r}", value, f"must be at most 256 of {AWS_TAG_CHARACTERS}")
                )
        if d.role_arn is not None and not _ROLE_ARN.fullmatch(d.role_arn):
            problems.append(Problem("role ARN", d.role_arn, "must be an IAM role ARN"))
    else:
        if not _GCP_PROJECT.fullmatch(d.project or ""):
            problems.append(Problem("project", d.project, "must be a GCP project id (6-30 of a-z, 0-9, -)"))
        if not d.zones:
            problems.append(Problem("zone", None, "is required for GCE discovery (one or more)"))
        for zone in d.zones:
            if not is_gcp_zone(zone):
                problems.append(Problem("zone", zone, "is not a GCP zone name (like us-central1-a)"))
        problems += _duplicates("zone", d.zones)
        for key, value in d.labels.items():
            if not is_gcp_label_key(key) or not value or not is_gcp_label_value(value):
                problems.append(
                    Problem(
                        f"label {key!r}", value, "must be KEY=VALUE in GCP's label alphabet (a-z, 0-9, _ -)"
                    )
                )
    return problems


def _duplicates(what: str, items: Sequence[str]) -> list[Problem]:
    seen, out = set(), []
    for item in items:
        if item in seen:
            out.append(Problem(what, item, "is listed twice"))
        seen.add(item)
    return out


# -- families from the catalog ------------------------------------------------------------------


def families(cloud: Cloud, family: AcceleratorFamily) -> list[str]:
    """Instance-type families of the catalog ('g5', 'p5', 'a3', ...) with this kind of accelerator."""
    sep = "." if cloud is Cloud.AWS else "-"
    found = {
        i.name.split(sep)[0] for i in instance_types(cloud) if accelerator(i.accelerator).family == family
    }
    if cloud is Cloud.GCP and family is AcceleratorFamily.NVIDIA_GPU:
        found.add("n1")  # N1 VMs with attached (guest) GPUs
    return sorted(found)


# -- rendering -----------------------------------------------------------------------------------


def scrape_config(s: ScrapeSettings) -> dict[str, Any]:
    """A complete prometheus.yml (global, rule_files, scrape_configs)."""
    interval = f"{s.scrape_interval_seconds}s"
    config: dict[str, Any] = {"global": {"scrape_interval": interval, "evaluation_interval": interval}}
    if s.rule_files:
        config["rule_files"] = list(s.rule_files)
    found = discoveries(s)
    jobs: list[dict[str, Any]] = []
    for d in found:
        cloud_jobs = _aws_jobs(s, d) if isinstance(d, AwsDiscovery) else _gcp_jobs(s, d)
        if len(found) > 1:
            cloud_jobs = [
                _suffixed(job, "ec2" if isinstance(d, AwsDiscovery) else "gce") for job in cloud_jobs
            ]
        jobs += cloud_jobs
    if any(t.ports or s.engine_ports for t in s.static_engines):
        jobs.append(_static_engine_job(s))
    config["scrape_configs"] = jobs
    return config


def _static_engine_job(s: ScrapeSettings) -> dict[str, Any]:
    """One `vllm-static` job: each pool's hosts on every engine port, labelled as discovery labels them."""
    configs = [
        {
            "targets": _host_ports(t.addresses, list(t.ports or s.engine_ports)),
            "labels": {"cloud": t.cloud, "pool": t.pool, "instance_type": t.instance_type},
        }
        for t in s.static_engines
    ]
    return {
        "job_name": f"{ENGINE_JOB}-static",
        "static_configs": configs,
        "relabel_configs": [_set("job", ENGINE_JOB)],
    }


def _host_ports(addresses: Any, ports: list[int]) -> Any:
    """['10.0.0.5'] -> ['10.0.0.5:8000', ...]; an Output of addresses gives an Output of targets."""

    def pairs(hosts: Sequence[str] | None) -> list[str]:
        return [f"{host}:{port}" for host in hosts or [] if host for port in ports]

    if isinstance(addresses, (list, tuple)) and all(isinstance(a, str) for a in addresses):
        return pairs(addresses)
    return pulumi.Output.from_input(addresses).apply(pairs)


def _suffixed(job: dict[str, Any], cloud: str) -> dict[str, Any]:
    """A job renamed '<job>-<cloud>' (Prometheus job names are unique) whose targets keep job=<job>."""
    name = job["job_name"]
    if any(r.get("target_label") == "job" for r in job["relabel_configs"]):  # already sets its job label
        return {**job, "job_name": f"{name}-{cloud}"}
    return {
        **job,
        "job_name": f"{name}-{cloud}",
        "relabel_configs": [*job["relabel_configs"], _set("job", name)],
    }


def render_scrape_config_yaml(s: ScrapeSettings) -> str:
    from inference_infra.components.monitoring.rules import dump_yaml

    return dump_yaml(scrape_config(s))


def _aws_jobs(s: ScrapeSettings, d: AwsDiscovery) -> list[dict[str, Any]]:
    nvidia = families(Cloud.AWS, AcceleratorFamily.NVIDIA_GPU)
    neuron = families(Cloud.AWS, AcceleratorFamily.AWS_NEURON)
    jobs = [_aws_job(DCGM_JOB, [DCGM_EXPORTER_PORT], nvidia, d)]
    if s.node_exporter:
        jobs.append(_aws_job(NODE_EXPORTER_JOB, [NODE_EXPORTER_PORT], sorted(nvidia + neuron), d))
    if s.neuron_monitor:
        jobs.append(_aws_job(NEURON_JOB, [NEURON_PORT], neuron, d))
    if s.pool_engine_ports:
        for port, pools in _engine_port_pools(s).items():
            job = _aws_job(f"{ENGINE_JOB}-{port}", [port], sorted(nvidia + neuron), d, pools=pools)
            jobs.append(_as_engine_job(job))
    elif s.engine_ports:
        jobs.append(_aws_job(ENGINE_JOB, list(s.engine_ports), sorted(nvidia + neuron), d))
    return jobs


def _engine_port_pools(s: ScrapeSettings) -> dict[int, list[str]]:
    """Port -> the pools whose nodes listen on it."""
    found: dict[int, list[str]] = {}
    for pool, ports in sorted(s.pool_engine_ports.items()):
        for port in ports:
            found.setdefault(port, []).append(pool)
    return dict(sorted(found.items()))


def _as_engine_job(job: dict[str, Any]) -> dict[str, Any]:
    return {**job, "relabel_configs": [*job["relabel_configs"], _set("job", ENGINE_JOB)]}


def _aws_job(
    job: str, ports: list[int], type_families: list[str], d: AwsDiscovery, pools: Sequence[str] = ()
) -> dict[str, Any]:
    filters = [
        {"name": "tag-key", "values": [AUTO_SHUTDOWN]},
        {"name": "instance-state-name", "values": ["running"]},
        {"name": "instance-type", "values": [f"{f}.*" for f in type_families]},
        *({"name": f"tag:{k}", "values": [v]} for k, v in sorted(d.tags.items())),
        *([{"name": "tag:Pool", "values": list(pools)}] if pools else []),
    ]
    sd_configs = []
    for region, port in ((r, p) for r in d.regions for p in ports):
        sd: dict[str, Any] = {"region": region, "port": port, "refresh_interval": "60s", "filters": filters}
        if d.role_arn:
            sd["role_arn"] = d.role_arn
        sd_configs.append(sd)
    relabel = [
        _set("cloud", "aws"),
        _copy("__meta_ec2_instance_id", "instance"),
        _copy("__meta_ec2_instance_id", "node"),
        _copy("__meta_ec2_instance_id", "instance_id"),
        _copy("__meta_ec2_instance_type", "instance_type"),
        _copy("__meta_ec2_availability_zone", "zone"),
        _copy("__meta_ec2_instance_lifecycle", "lifecycle"),  # spot; absent on on-demand instances
        _copy("__meta_ec2_tag_Pool", "pool"),  # the fleet (launch templates tag instances Pool=<fleet>)
        *(_copy(f"__meta_ec2_tag_{key}", _snake(key)) for key in (*COST_TAG_KEYS, AUTO_SHUTDOWN)),
    ]
    return {"job_name": job, "ec2_sd_configs": sd_configs, "relabel_configs": relabel}


def _gcp_jobs(s: ScrapeSettings, d: GcpDiscovery) -> list[dict[str, Any]]:
    nvidia = families(Cloud.GCP, AcceleratorFamily.NVIDIA_GPU)
    # TPU VMs are not Compute Engine instances (GCE discovery does not list them): GPUs only here.
    jobs = [_gcp_job(DCGM_JOB, [DCGM_EXPORTER_PORT], nvidia, d)]
    if s.node_exporter:
        jobs.append(_gcp_job(NODE_EXPORTER_JOB, [NODE_EXPORTER_PORT], nvidia, d))
    if s.pool_engine_ports:
        for port, pools in _engine_port_pools(s).items():
            job = _gcp_job(f"{ENGINE_JOB}-{port}", [port], nvidia, d)
            only = _keep(_meta_gce_label("fleet"), "|".join(re.escape(p) for p in pools))
            jobs.append(_as_engine_job({**job, "relabel_configs": [only, *job["relabel_configs"]]}))
    elif s.engine_ports:
        jobs.append(_gcp_job(ENGINE_JOB, list(s.engine_ports), nvidia, d))
    return jobs


def _gcp_job(job: str, ports: list[int], type_families: list[str], d: GcpDiscovery) -> dict[str, Any]:
    auto_shutdown = _meta_gce_label(gcp_label_key(AUTO_SHUTDOWN))
    keep = [
        _keep("__meta_gce_instance_status", "RUNNING"),
        _keep(auto_shutdown, ".+"),
        _keep("__meta_gce_machine_type", f".*/({'|'.join(type_families)})-[^/]+"),
        *(_keep(_meta_gce_label(k), re.escape(v)) for k, v in sorted(d.labels.items())),
    ]
    relabel = [
        *keep,
        _set("cloud", "gcp"),
        _copy("__meta_gce_instance_name", "instance"),
        _copy("__meta_gce_instance_name", "node"),
        _copy("__meta_gce_instance_id", "instance_id"),
        _copy("__meta_gce_machine_type", "instance_type", regex=".*/([^/]+)"),
        _copy("__meta_gce_zone", "zone", regex=".*/([^/]+)"),
        _copy("__meta_gce_project", "project"),
        _copy(_meta_gce_label("fleet"), "pool"),  # GpuFleet labels its VMs fleet=<name>
        *(_copy(_meta_gce_label(gcp_label_key(key)), _snake(key)) for key in (*COST_TAG_KEYS, AUTO_SHUTDOWN)),
    ]
    sd_configs = [
        {"project": d.project, "zone": zone, "port": port, "refresh_interval": "60s"}
        for zone in d.zones
        for port in ports
    ]
    return {"job_name": job, "gce_sd_configs": sd_configs, "relabel_configs": relabel}


@dataclass(frozen=True, kw_only=True)
class GceVm:
    """A VM as GCE discovery lists it: what a job's zones and keep rules are held against."""

    project: str
    zone: str
    machine_type: str  # e.g. 'g2-standard-8'
    labels: Mapping[str, str]
    status: str = "RUNNING"


def gce_job_keeps(job: Mapping[str, Any], vm: GceVm) -> bool:
    """Whether a GCE scrape job (as `scrape_config` renders it) lists the VM and keeps it: one of its
    `gce_sd_configs` covers the VM's project and zone, and every `keep` relabel rule matches (Prometheus
    joins a rule's source labels with ';' and fully anchors its regex; a label absent is empty)."""
    if not any(
        sd.get("project") == vm.project and sd.get("zone") == vm.zone for sd in job.get("gce_sd_configs", ())
    ):
        return False
    meta = {
        "__meta_gce_project": vm.project,
        "__meta_gce_zone": f"https://www.googleapis.com/compute/v1/projects/{vm.project}/zones/{vm.zone}",
        "__meta_gce_machine_type": (
            f"https://www.googleapis.com/compute/v1/projects/{vm.project}/zones/{vm.zone}/machineTypes/"
            f"{vm.machine_type}"
        ),
        "__meta_gce_instance_status": vm.status,
        **{_meta_gce_label(k): v for k, v in vm.labels.items()},
    }
    for rule in job.get("relabel_configs", ()):
        if rule.get("action") != "keep":
            continue
        value = ";".join(meta.get(s, "") for s in rule["source_labels"])
        if re.fullmatch(rule.get("regex", "(.*)"), value) is None:
            return False
    return True


def _copy(source: str, target: str, regex: str | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"source_labels": [source], "target_label": target}
    if regex:
        rule["regex"] = regex
    return rule


def _set(target: str, value: str) -> dict[str, Any]:
    return {"target_label": target, "replacement": value}


def _keep(source: str, regex: str) -> dict[str, Any]:
    return {"source_labels": [source], "regex": regex, "action": "keep"}


def _meta_gce_label(label_key: str) -> str:
    # Prometheus turns characters a label name cannot hold (like '-') into '_'.
    return "__meta_gce_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", label_key)


def _snake(tag_key: str) -> str:
    """'CostCenter' -> 'cost_center'."""
    return gcp_label_key(tag_key).replace("-", "_")


# Kubernetes names: DNS-1123 labels (namespace) and subdomains (service account).
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def discovery_subject_problems(namespace: str, service_account: str) -> list[Problem]:
    """The one Kubernetes service account that may use the discovery identity (IRSA's trust policy,
    GKE Workload Identity's binding) has a valid namespace and name."""
    problems = []
    if not _DNS_LABEL.fullmatch(namespace):
        problems.append(Problem("namespace", namespace, "must be a Kubernetes namespace name (RFC 1123)"))
    if not _DNS_SUBDOMAIN.fullmatch(service_account):
        problems.append(
            Problem("service_account", service_account, "must be a Kubernetes service account name")
        )
    return problems


def discovery_policy(cloud: Cloud | str) -> dict[str, Any]:
    """What the discovery identity may do: list instances, nothing else.

    AWS: an IAM policy document for the IRSA role (EC2's Describe calls take no resource-level
    restriction, hence `*`). GCP: the permissions of a custom role for the Workload Identity
    service account (narrower than roles/compute.viewer).
    """
    if Cloud(cloud) is Cloud.AWS:
        return {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "PrometheusEc2Discovery",
                    "Effect": "Allow",
                    "Action": ["ec2:DescribeInstances", "ec2:DescribeAvailabilityZones"],
                    "Resource": "*",
                }
            ],
        }
    return {"title": "Prometheus GCE discovery", "includedPermissions": ["compute.instances.list"]}
