"""Every GCE fleet of both reference plans is kept by the scrape jobs: its labels, every zone it may run in.

prod's `small-l4` used to be scraped by nothing: its instance template lacked the `auto-shutdown` label the
GCE jobs keep, and discovery listed only one of its managed group's two zones, so its absent-target
alerts fired forever (#33 item 6). The jobs are held against the VMs as GCE discovery would list them
(`gce_job_keeps`: zones from the sd configs, the keep rules applied as Prometheus applies them).
"""

from __future__ import annotations

import pytest

from inference_infra.components.monitoring.scrape import GceVm, gce_job_keeps

INSTANCE = "gcp:compute/instance:Instance"
TEMPLATES = (
    "gcp:compute/instanceTemplate:InstanceTemplate",
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
)
GROUPS = (
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
    "gcp:compute/instanceGroupManager:InstanceGroupManager",
)
RELEASE = "kubernetes:helm.sh/v3:Release"


def _fleet_vms(capture, project: str) -> dict[str, list[GceVm]]:
    """Fleet name -> the VMs it may run: each instance, and a managed group's template in each zone."""
    found: dict[str, list[GceVm]] = {}
    for vm in capture.of_type(INSTANCE):
        labels = vm.props.get("labels") or {}
        if "fleet" not in labels:
            continue
        found.setdefault(labels["fleet"], []).append(
            GceVm(project=project, zone=vm.props["zone"], machine_type=vm.props["machineType"], labels=labels)
        )
    templates = {t.urn: t for kind in TEMPLATES for t in capture.of_type(kind)}
    for group in (g for kind in GROUPS for g in capture.of_type(kind)):
        (template,) = [templates[u] for u in group.dependencies if u in templates]
        labels = template.props.get("labels") or {}
        zones = group.props.get("distributionPolicyZones") or [group.props["zone"]]
        for zone in zones:
            found.setdefault(labels["fleet"], []).append(
                GceVm(project=project, zone=zone, machine_type=template.props["machineType"], labels=labels)
            )
    return found


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_every_gce_fleet_of_the_reference_plans_is_scraped(plan_stack, stack):
    result = plan_stack(stack)
    capture = result.capture
    releases = [r for r in capture.of_type(RELEASE) if r.name.endswith("kube-prometheus-stack")]
    if not releases:
        # dev runs no GCP fleet and no Prometheus: nothing to hold (and nothing unscraped).
        assert not capture.of_type(INSTANCE)
        assert not [g for kind in GROUPS for g in capture.of_type(kind)]
        return
    jobs = releases[0].props["values"]["prometheus"]["prometheusSpec"]["additionalScrapeConfigs"]
    gce = [j for j in jobs if "gce_sd_configs" in j]
    (project,) = {sd["project"] for j in gce for sd in j["gce_sd_configs"]}
    fleets = _fleet_vms(capture, project)
    assert {"small-l4", "llama70b-h100"} <= set(fleets)
    assert {vm.zone for vm in fleets["small-l4"]} == {"us-central1-a", "us-central1-b"}
    for fleet, vms in fleets.items():
        for vm in vms:
            for exporter in ("dcgm-exporter-gce", "node-exporter-gce"):
                job = next(j for j in gce if j["job_name"] == exporter)
                assert gce_job_keeps(job, vm), f"{stack}: {exporter} misses {fleet} in {vm.zone}"
            engines = [j for j in gce if j["job_name"].startswith("vllm-") and gce_job_keeps(j, vm)]
            assert engines, f"{stack}: no engine job keeps {fleet} in {vm.zone}"


def _vm(**overrides) -> GceVm:
    labels = {"fleet": "l4", "environment": "prod", "auto-shutdown": "false"}
    values = {
        "project": "acme-inference",
        "zone": "us-central1-a",
        "machine_type": "g2-standard-8",
        "labels": labels,
    }
    return GceVm(**{**values, **overrides})


def _job():
    from inference_infra.components.monitoring.scrape import GcpDiscovery, ScrapeSettings, scrape_config

    settings = ScrapeSettings(
        discovery=GcpDiscovery(
            project="acme-inference", zones=["us-central1-a"], labels={"environment": "prod"}
        )
    )
    return scrape_config(settings)["scrape_configs"][0]  # dcgm-exporter


def test_gce_job_keeps_passes_a_labelled_running_gpu_vm_in_a_listed_zone():
    assert gce_job_keeps(_job(), _vm())


@pytest.mark.parametrize(
    "vm",
    [
        _vm(zone="us-central1-b"),  # a zone discovery does not list
        _vm(project="other-project"),
        _vm(labels={"fleet": "l4", "environment": "prod"}),  # no auto-shutdown label (the old template)
        _vm(labels={"fleet": "l4", "environment": "dev", "auto-shutdown": "true"}),
        _vm(labels={"fleet": "l4", "environment": "prod-eu", "auto-shutdown": "true"}),  # not a prefix match
        _vm(status="TERMINATED"),  # stopped by the watchdog: not a target that is down
        _vm(machine_type="e2-standard-4"),  # no GPU
        _vm(machine_type="xg2-standard-8"),
    ],
)
def test_gce_job_keeps_rejects_what_discovery_would_drop(vm):
    assert not gce_job_keeps(_job(), vm)
