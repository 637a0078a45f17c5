"""GCP elastic pools: the managed instance group, its template and autoscaler, the endpoint's backend, and
every input they refuse."""

from __future__ import annotations

import dataclasses
import math
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ElasticArgs, ScheduleArgs, ServedModel
from inference_infra.components.gcp.elastic import (
    ENGINE_METRICS,
    POOL_LABEL,
    cron_days,
    metric_type,
)
from inference_infra.components.gcp.endpoint import GcpInferenceEndpoint, GcpInferenceEndpointArgs
from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs, GpuReservation, plan_gpu_fleet
from inference_infra.components.gcp.startup import OPS_AGENT_CONFIG, StartupConfig, validate_startup
from inference_infra.components.gcp.tpu_vm import TpuVm, TpuVmArgs, plan_tpu_vm
from inference_infra.components.monitoring.serving import engine_metric_table
from inference_infra.components.resources import GCP_INSTANCE
from inference_infra.components.serving import EngineFamily, engine_image
from tests.components.gcp.helpers import files_of, pinned_weights

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"
TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
HEALTH_CHECK = "gcp:compute/healthCheck:HealthCheck"
FIREWALL = "gcp:compute/firewall:Firewall"
BACKEND = "gcp:compute/regionBackendService:RegionBackendService"
URL_MAP = "gcp:compute/regionUrlMap:RegionUrlMap"
LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8)
WEIGHTS = pinned_weights("models", ["gs://models/llama-3.1-8b-instruct"])
BERLIN = ScheduleArgs(time_zone="Europe/Berlin")


def fleet(**overrides) -> GpuFleetArgs:
    base = {
        "machine_type": "g2-standard-8",
        "zone": "us-central1-a",
        "subnetwork": SUBNET,
        "network": NETWORK,
        "spot": 4,
        "model": LLAMA_8B,
        "weights": WEIGHTS,
        "elastic": ElasticArgs(),
    }
    return GpuFleetArgs(**{**base, **overrides})


def policy_of(capture) -> dict:
    return capture.one(AUTOSCALER).props["autoscalingPolicy"]


# --- the managed instance group ---------------------------------------------------------------


def test_gpu_fleet_elastic_is_a_regional_group_from_a_template_not_fixed_vms(plan_of):
    pool = GpuFleet("l4", fleet(zones=("us-central1-b",)))
    capture = plan_of(pool)
    assert capture.of_type(GCP_INSTANCE) == []
    template = capture.one(TEMPLATE)
    group = capture.one(GROUP)
    assert template.props["machineType"] == "g2-standard-8"
    assert "name" not in template.props  # auto-named: a changed template is made before the old one goes
    assert group.props["name"] == "l4"
    assert group.props["region"] == "us-central1"
    assert group.props["distributionPolicyZones"] == ["us-central1-a", "us-central1-b"]
    (version,) = group.props["versions"]
    assert version["name"] == "serving"
    # the template's unique self link: a new template is a new version, never an edit in place
    assert version["instanceTemplate"].startswith(
        f"https://www.googleapis.com/compute/v1/{template.id}?uniqueId="
    )
    assert group.props["namedPorts"] == [{"name": "engine", "port": 8000}]
    assert "targetSize" not in group.props  # the autoscaler owns the size
    assert pool.scaling_plan is not None
    assert pool.instances == []


def test_gpu_fleet_elastic_template_boots_like_the_fixed_vms(plan_of):
    elastic = plan_of(GpuFleet("l4", fleet())).one(TEMPLATE).props
    fixed = plan_of(GpuFleet("fixed", fleet(elastic=None, spot=1))).one(GCP_INSTANCE).props
    for key in ("enable-oslogin", "block-project-ssh-keys", "serial-port-enable"):
        assert elastic["metadata"][key] == fixed["metadata"][key]
    assert "networkInterfaces" in elastic
    assert elastic["networkInterfaces"] == [{"subnetwork": SUBNET, "nicType": "GVNIC"}]  # no external IP
    assert elastic["shieldedInstanceConfig"] == fixed["shieldedInstanceConfig"]
    assert elastic["serviceAccount"]["scopes"] == fixed["serviceAccount"]["scopes"]
    assert elastic["disks"][0]["boot"] is True
    assert elastic["disks"][0]["sourceImage"] == fixed["bootDisk"]["initializeParams"]["image"]
    files = files_of(elastic["metadata"]["startup-script"])
    assert "/opt/inference-infra/bin/gcs_weights.py" in files


def test_gpu_fleet_elastic_spot_vms_are_deleted_at_preemption_so_the_group_recreates_them(plan_of):
    scheduling = plan_of(GpuFleet("l4", fleet())).one(TEMPLATE).props["scheduling"]
    assert scheduling == {
        "provisioningModel": "SPOT",
        "preemptible": True,
        "automaticRestart": False,
        "onHostMaintenance": "TERMINATE",
        "instanceTerminationAction": "DELETE",
    }


def test_gpu_fleet_elastic_autoheals_on_the_engine_health_after_a_cold_start(plan_of):
    pool = GpuFleet("l4", fleet())
    capture = plan_of(pool)
    check = capture.one(HEALTH_CHECK)
    assert check.props["httpHealthCheck"] == {"port": 8000, "requestPath": "/health"}
    assert check.props["checkIntervalSec"] * check.props["unhealthyThreshold"] == 300
    healing = capture.one(GROUP).props["autoHealingPolicies"]
    assert healing["initialDelaySec"] == pool.serving.grace_seconds()
    rule = next(r for r in capture.of_type(FIREWALL) if r.name == "l4-autohealing")
    assert rule.props["sourceRanges"] == ["35.191.0.0/16", "130.211.0.0/22"]
    assert rule.props["allows"] == [{"protocol": "tcp", "ports": ["8000"]}]
    assert rule.props["targetServiceAccounts"] == ["l4-node-sa@test-project.iam.gserviceaccount.com"]


def test_gpu_fleet_elastic_rolls_a_new_template_out_one_zone_at_a_time(plan_of):
    update = plan_of(GpuFleet("l4", fleet(zones=("us-central1-b",)))).one(GROUP).props["updatePolicy"]
    assert update["type"] == "PROACTIVE"
    assert update["maxSurgeFixed"] == 2  # regional groups: 0 or at least one per zone
    assert update["maxUnavailableFixed"] == 0
    assert update["instanceRedistributionType"] == "NONE"


def test_gpu_fleet_elastic_reserved_consumes_its_reservation_and_keeps_it_as_the_floor(plan_of):
    args = fleet(spot=0, reserved=2, reservation=GpuReservation(), elastic=ElasticArgs(floor_share=0))
    pool = GpuFleet("h100", args)
    capture = plan_of(pool)
    affinity = capture.one(TEMPLATE).props["reservationAffinity"]
    assert affinity["type"] == "SPECIFIC_RESERVATION"
    assert affinity["specificReservation"]["values"] == ["h100-reservation"]
    assert policy_of(capture)["minReplicas"] == 2  # a reservation is billed used or not
    update = capture.one(GROUP).props["updatePolicy"]
    assert (update["maxSurgeFixed"], update["maxUnavailableFixed"]) == (0, 1)


# --- the autoscaler -----------------------------------------------------------------------------


def test_gpu_fleet_elastic_scales_on_the_engines_running_and_waiting_requests(plan_of):
    pool = GpuFleet("l4", fleet())
    capture = plan_of(pool)
    autoscaler = capture.one(AUTOSCALER)
    assert autoscaler.props["target"] == f"https://www.googleapis.com/compute/v1/{capture.one(GROUP).id}"
    policy = policy_of(capture)
    plan = pool.scaling_plan
    assert (policy["minReplicas"], policy["maxReplicas"]) == (1, 4)  # ceil(4 x 0.25), the peak
    assert plan.target_in_flight == pytest.approx(8 * 0.7)  # ElasticArgs.target_utilisation
    assert [m["name"] for m in policy["metrics"]] == [
        "prometheus.googleapis.com/vllm:num_requests_running/gauge",
        "prometheus.googleapis.com/vllm:num_requests_waiting/gauge",
    ]
    for metric in policy["metrics"]:
        assert metric["singleInstanceAssignment"] == plan.target_in_flight
        # per-group (not gce_instance), this pool's series only; '=' joined by AND
        assert metric["filter"] == (
            f'metric.type = "{metric["name"]}" AND resource.type = "prometheus_target" AND '
            'metric.labels.inference_infra_pool = "l4"'
        )
    assert "loadBalancingUtilization" not in policy


def test_gpu_fleet_elastic_engine_metric_names_are_the_pinned_vllm_ones():
    version = engine_image(EngineFamily.NVIDIA_VLLM).engine_version
    names = {m.name: m.type for m in engine_metric_table(version)}
    assert {name: names.get(name) for name in ENGINE_METRICS} == dict.fromkeys(ENGINE_METRICS, "gauge")
    assert (
        metric_type("vllm:num_requests_running")
        == "prometheus.googleapis.com/vllm:num_requests_running/gauge"
    )


def test_gpu_fleet_elastic_waits_a_cold_start_and_scales_in_one_vm_at_a_time(plan_of):
    pool = GpuFleet("l4", fleet(elastic=ElasticArgs(scale_in_cooldown_seconds=1200, scale_in_share=0)))
    policy = policy_of(plan_of(pool))
    # the initialization period is the expected cold start (launch to serving), not the grace
    # (Compute API coolDownPeriodSec: "the number of seconds that your application takes to initialize")
    expected = math.ceil(pool.serving.cold_start.seconds)
    assert policy["cooldownPeriod"] == expected < pool.serving.grace_seconds()
    # the window: the autoscaler's 600 s stabilisation plus the cooldown (a shorter one binds nothing)
    assert policy["scaleInControl"] == {"maxScaledInReplicas": {"fixed": 1}, "timeWindowSec": 600 + 1200}
    assert policy["mode"] == "ON"


def test_gpu_fleet_elastic_scales_in_its_share_of_the_group_per_window(plan_of):
    # pulumi-gcp RegionAutoscalerAutoscalingPolicyScaleInControlMaxScaledInReplicas: fixed or percent
    pool = GpuFleet("l4", fleet(elastic=ElasticArgs(scale_in_cooldown_seconds=300, scale_in_share=0.25)))
    policy = policy_of(plan_of(pool))
    assert policy["scaleInControl"] == {"maxScaledInReplicas": {"percent": 25}, "timeWindowSec": 600 + 300}


def test_gpu_fleet_elastic_node_publishes_its_engines_load_through_the_ops_agent(plan_of):
    script = plan_of(GpuFleet("l4", fleet())).one(TEMPLATE).props["metadata"]["startup-script"]
    agent = yaml.safe_load(files_of(script)[OPS_AGENT_CONFIG])
    receiver = agent["metrics"]["receivers"]["vllm"]
    assert receiver["type"] == "prometheus"
    (job,) = receiver["config"]["scrape_configs"]
    assert job["static_configs"] == [{"targets": ["localhost:9000"], "labels": {POOL_LABEL: "l4"}}]
    assert job["metric_relabel_configs"] == [
        {
            "source_labels": ["__name__"],
            "regex": "vllm:num_requests_running|vllm:num_requests_waiting",
            "action": "keep",
        }
    ]
    assert agent["metrics"]["service"]["pipelines"]["vllm"] == {"receivers": ["vllm"]}
    assert agent["metrics"]["receivers"]["dcgm"] == {"type": "dcgm", "receiver_version": 2}


def test_gpu_fleet_elastic_scrape_config_is_one_prometheus_reads(plan_of, tmp_path: Path):
    script = plan_of(GpuFleet("l4", fleet())).one(TEMPLATE).props["metadata"]["startup-script"]
    receiver = yaml.safe_load(files_of(script)[OPS_AGENT_CONFIG])["metrics"]["receivers"]["vllm"]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(receiver["config"]))
    assert shutil.which("promtool"), "promtool is a system dependency (.ci/system-deps)"
    result = subprocess.run(["promtool", "check", "config", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_gpu_fleet_fixed_ops_agent_config_is_unchanged(plan_of):
    script = plan_of(GpuFleet("fixed", fleet(elastic=None, spot=1))).one(GCP_INSTANCE).props["metadata"]
    agent = yaml.safe_load(files_of(script["startup-script"])[OPS_AGENT_CONFIG])
    assert list(agent["metrics"]["receivers"]) == ["dcgm"]


def test_gpu_fleet_elastic_without_the_ops_agent_scales_on_load_balancer_utilisation(plan_of):
    pool = GpuFleet("l4", fleet(ops_agent=False))
    capture = plan_of(pool)
    policy = policy_of(capture)
    assert "metrics" not in policy
    assert policy["loadBalancingUtilization"] == {"target": 0.7}  # ElasticArgs.target_utilisation
    assert pool.scaling.rate_per_instance > 0
    assert any("load balancer's request rate" in m for _, m in capture.log)
    pool_of = pool.endpoint_pool()
    assert pool_of.backend.max_rate_per_instance == pool.scaling.rate_per_instance


def test_gpu_fleet_elastic_schedule_holds_the_minimum_through_working_hours_and_zero_outside(plan_of):
    schedule = ScheduleArgs(time_zone="Europe/Berlin", days="1-5", start_hour=7, end_hour=20)
    policy = policy_of(plan_of(GpuFleet("l4", fleet(elastic=ElasticArgs(min_size=2, schedule=schedule)))))
    assert policy["minReplicas"] == 0
    assert policy["scalingSchedules"] == [
        {
            "name": "working-hours",
            "description": "At least 2 VMs 1-5 07:00-20:00 Europe/Berlin; 0 outside",
            "schedule": "0 7 * * MON-FRI",
            "timeZone": "Europe/Berlin",
            "durationSec": 13 * 3600,
            "minRequiredReplicas": 2,
        }
    ]


def test_gpu_fleet_elastic_schedule_keeps_an_off_hours_size(plan_of):
    schedule = ScheduleArgs(time_zone="America/New_York", off_hours_size=1)
    policy = policy_of(plan_of(GpuFleet("l4", fleet(elastic=ElasticArgs(min_size=3, schedule=schedule)))))
    assert policy["minReplicas"] == 1
    assert policy["scalingSchedules"][0]["minRequiredReplicas"] == 3


def test_cron_days_names_numbers_as_every_cron_reads_them():
    assert cron_days("1-5") == "MON-FRI"
    assert cron_days("0,6") == "SUN,SAT"
    assert cron_days("7") == "SUN"
    assert cron_days("MON,WED-FRI") == "MON,WED-FRI"
    assert cron_days("*") == "*"


# --- behind the endpoint ------------------------------------------------------------------------


def endpoint(*pools) -> GcpInferenceEndpoint:
    return GcpInferenceEndpoint(
        "llm",
        GcpInferenceEndpointArgs(
            network=NETWORK, subnetwork=SUBNET, pools=[p.endpoint_pool() for p in pools], region="us-central1"
        ),
    )


def test_gpu_fleet_elastic_is_the_endpoint_backend_through_its_named_port(plan_of):
    pool = GpuFleet("l4", fleet())
    capture = plan_of(endpoint(pool))
    backend = capture.one(BACKEND)
    assert backend.props["backends"] == [
        {
            "group": "https://www.googleapis.com/compute/v1/projects/test-project/regions/us-central1/"
            "instanceGroups/l4",
            "balancingMode": "UTILIZATION",
            "capacityScaler": 1.0,
        }
    ]
    assert backend.props["portName"] == "engine"
    assert backend.props["connectionDrainingTimeoutSec"] == pool.scaling_plan.deregistration_delay_seconds
    assert capture.of_type("gcp:compute/instanceGroup:InstanceGroup") == []


def test_gpu_fleet_elastic_load_balancer_signal_balances_by_rate(plan_of):
    pool = GpuFleet("l4", fleet(ops_agent=False))
    backend = plan_of(endpoint(pool)).one(BACKEND)
    assert backend.props["backends"][0]["balancingMode"] == "RATE"
    assert backend.props["backends"][0]["maxRatePerInstance"] == pool.scaling.rate_per_instance


def test_gpu_fleet_elastic_at_zero_answers_with_retry_after(plan_of):
    pool = GpuFleet("l4", fleet(elastic=ElasticArgs(schedule=BERLIN)))
    url_map = plan_of(endpoint(pool)).one(URL_MAP)
    (matcher,) = url_map.props["pathMatchers"]
    header = matcher["routeRules"][0]["headerAction"]["responseHeadersToAdds"]
    seconds = int(header[0]["headerValue"])
    assert header == [{"headerName": "Retry-After", "headerValue": str(seconds), "replace": True}]
    assert seconds >= pool.serving.grace_seconds()
    assert seconds % 60 == 0


def test_gpu_fleet_elastic_without_a_zero_size_adds_no_retry_after(plan_of):
    url_map = plan_of(endpoint(GpuFleet("l4", fleet()))).one(URL_MAP)
    assert "headerAction" not in url_map.props["pathMatchers"][0]["routeRules"][0]


# --- what it refuses ----------------------------------------------------------------------------


def problems(args: GpuFleetArgs) -> list[str]:
    return [f"{p.input}: {p.allowed}" for p in plan_gpu_fleet("l4", args, project="test-project").problems]


def test_gpu_fleet_elastic_rejects_several_engines_per_vm():
    found = problems(fleet(machine_type="g2-standard-48"))
    assert any(p.startswith("elastic: needs one engine per VM, and this machine runs 4") for p in found), (
        found
    )


def test_gpu_fleet_elastic_rejects_a_fleet_without_a_network():
    assert any(p.startswith("network: is required with elastic") for p in problems(fleet(network=None)))


def test_gpu_fleet_elastic_rejects_a_fleet_that_serves_no_model():
    assert any(p.startswith("elastic: needs a served model") for p in problems(fleet(weights=None)))


def test_gpu_fleet_elastic_rejects_a_warm_pool():
    found = problems(fleet(elastic=ElasticArgs(warm_pool_size=1)))
    assert any(p.startswith("elastic.warm_pool_size: is not offered on GCP") for p in found)


def test_gpu_fleet_rejects_zones_without_elastic():
    assert problems(fleet(elastic=None, zones=("us-central1-b",))) == [
        "zones: applies only to elastic pools (set elastic)"
    ]


def test_gpu_fleet_elastic_rejects_a_zone_of_another_region():
    found = problems(fleet(zones=("europe-west4-a",)))
    assert any(p.startswith("zones[0]: must be in the fleet's region us-central1") for p in found)


def test_gpu_fleet_elastic_rejects_zones_for_reserved_vms():
    args = fleet(spot=0, reserved=1, reservation=GpuReservation(), zones=("us-central1-b",))
    assert any(p.startswith("zones: must be empty for reserved VMs") for p in problems(args))


def test_gpu_fleet_elastic_rejects_bad_bounds_with_their_keys():
    found = problems(fleet(elastic=ElasticArgs(min_size=5)))
    assert any(p.startswith("elastic.min_size:") for p in found), found


def test_gpu_fleet_elastic_rejects_before_registering_anything(plan_of):
    with pytest.raises(InputError, match="needs one engine per VM"):
        GpuFleet("l4", fleet(machine_type="g2-standard-48"))
    assert [r for r in plan_of().resources if r.custom] == []


def test_tpu_vm_rejects_elastic_naming_the_input():
    args = TpuVmArgs(
        zone="us-central1-a",
        network=NETWORK,
        subnetwork=SUBNET,
        accelerator_type="v5litepod-4",
        model=ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8),
        weights=pinned_weights("models", ["gs://models/qwen2.5-7b-instruct"]),
        elastic=ElasticArgs(),
    )
    found = plan_tpu_vm("qwen", args, project="test-project").problems
    assert [p.input for p in found] == ["elastic"]
    assert "cannot join a managed instance group" in found[0].allowed
    with pytest.raises(InputError, match=r"TpuVm 'qwen'.*elastic 'set' is not offered on TPU VMs"):
        TpuVm("qwen", args)


def test_validate_startup_rejects_an_engine_load_pool_without_the_agent():
    found = validate_startup(dataclasses.replace(StartupConfig(engine_load_pool="l4"), ops_agent=False))
    assert [p.input for p in found] == ["engine_load_pool"]


# --- priced as a range (components/pricing/elastic.py reads the autoscaler's sizes) -------------


def _group_item(capture):
    from inference_infra.components.offline_plan.pricing import price_capture

    report = price_capture(capture)
    return next(i for i in report.items if i.urn.endswith("::l4-group"))


def test_gpu_fleet_elastic_is_priced_up_to_its_autoscaler_maximum(plan_of):
    item = _group_item(plan_of(GpuFleet("l4", fleet())))
    one = item.hourly_usd / 4
    assert item.basis.startswith("4 x g2-standard-8 spot")
    # issue #38: the minimum is the autoscaler's floor (1 VM), not 0 (the group sets no size itself)
    assert (item.range.min_size, item.range.max_size) == (1, 4)
    assert item.hourly_min == pytest.approx(one)
    assert item.hourly_expected == pytest.approx(one)  # no schedule: the autoscaler's floor, 1 VM


def test_gpu_fleet_elastic_schedule_is_priced_for_the_working_hours_only(plan_of):
    item = _group_item(plan_of(GpuFleet("l4", fleet(elastic=ElasticArgs(min_size=2, schedule=BERLIN)))))
    one = item.hourly_usd / 4
    assert item.hourly_min == 0
    # MON-FRI 08:00-19:00: 55 h of the week's 168 at 2 VMs, the rest at 0
    assert item.hourly_expected == pytest.approx(one * 2 * 55 / 168)


def test_gpu_fleet_elastic_boot_script_passes_shellcheck(plan_of, shellcheck):
    shellcheck(plan_of(GpuFleet("l4", fleet())).one(TEMPLATE).props["metadata"]["startup-script"])


def _project_roles(capture, fleet_name: str) -> list[str]:
    grants = capture.of_type("gcp:projects/iAMMember:IAMMember")
    return sorted(r.props["role"] for r in grants if r.name.startswith(f"{fleet_name}-"))


def test_gpu_fleet_node_account_writes_metrics_only_with_the_ops_agent(plan_of):
    assert _project_roles(plan_of(GpuFleet("l4", fleet())), "l4") == [
        "roles/logging.logWriter",
        "roles/monitoring.metricWriter",
    ]
    quiet = plan_of(GpuFleet("quiet", fleet(ops_agent=False)))
    assert _project_roles(quiet, "quiet") == ["roles/logging.logWriter"]
