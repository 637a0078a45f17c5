"""The GCP elastic pools in the reference stack: prod's interactive L4 pool, and config errors by key."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from tests.infra.test_gcp_stack import BASE, plan_config

GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
MODEL = {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 8}
POOL = {
    "name": "l4",
    "machineType": "g2-standard-8",
    "model": MODEL,
    "spot": 3,
    "models": ["gs://acme-models/llama"],
    "manifestSha256": {"gs://acme-models/llama": "a" * 64},
}


def test_prod_interactive_l4_pool_is_an_elastic_group_on_the_engines_load(plan_stack):
    capture = plan_stack("prod").capture
    group = capture.one(GROUP)
    assert group.name == "small-l4-group"
    assert group.props["distributionPolicyZones"] == ["us-central1-a", "us-central1-b"]
    policy = capture.one(AUTOSCALER).props["autoscalingPolicy"]
    assert (policy["minReplicas"], policy["maxReplicas"]) == (1, 2)  # minSize 1; the peak, spot: 2
    assert "scalingSchedules" not in policy  # production: no hours
    assert [m["name"] for m in policy["metrics"]] == [
        "prometheus.googleapis.com/vllm:num_requests_running/gauge",
        "prometheus.googleapis.com/vllm:num_requests_waiting/gauge",
    ]
    backend = next(
        r for r in capture.of_type("gcp:compute/regionBackendService:RegionBackendService")
        if r.name == "gcp-llm-small-l4-backend"
    )  # fmt: skip
    assert backend.props["backends"][0]["group"].endswith("/regions/us-central1/instanceGroups/small-l4")


def test_gcp_stack_elastic_pool_with_working_hours(tmp_path):
    pool = {**POOL, "elastic": {"schedule": {"timeZone": "Europe/Berlin", "startHour": 7, "endHour": 19}}}
    config = {**BASE, "inference-infra:environment": "dev", "inference-infra:gcpGpuFleets": [pool]}
    capture = plan_config(tmp_path, config).capture
    policy = capture.one(AUTOSCALER).props["autoscalingPolicy"]
    assert policy["minReplicas"] == 0
    (schedule,) = policy["scalingSchedules"]
    assert (schedule["schedule"], schedule["timeZone"], schedule["durationSec"]) == (
        "0 7 * * MON-FRI",
        "Europe/Berlin",
        12 * 3600,
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"inference-infra:tpuVms": [{"name": "t", "acceleratorType": "v5litepod-8", "elastic": {}}]},
            r"inference-infra:tpuVms\[0\].elastic 'set' is not offered on TPU VMs: a TPU VM cannot join a "
            "managed instance group",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**POOL, "elastic": {"minSize": 4}}]},
            r"inference-infra:gcpGpuFleets\[0\].elastic.minSize 4 gives a minimum of 4 machines above the "
            "maximum of 3",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**POOL, "elastic": {"warmPoolSize": 1}}]},
            r"inference-infra:gcpGpuFleets\[0\].elastic.warmPoolSize 1 is not offered on GCP",
        ),
        (
            {
                "inference-infra:gcpGpuFleets": [
                    {**POOL, "elastic": {"schedule": {"timeZone": "Mars/Olympus"}}}
                ]
            },
            r"inference-infra:gcpGpuFleets\[0\].elastic.schedule.timeZone 'Mars/Olympus' must be an IANA",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**POOL, "zones": ["us-central1-b"]}]},
            r"inference-infra:gcpGpuFleets\[0\].zones \['us-central1-b'\] applies only to elastic pools",
        ),
    ],
)
def test_gcp_stack_rejects_elastic_settings_by_key(tmp_path, config, message):
    with pytest.raises(InputError, match=message):
        plan_config(tmp_path, {**BASE, **config})


def test_prod_l4_pool_is_priced_from_its_autoscalers_minimum(plan_stack):
    # issue #38: the group has no minimum of its own (targetSize unset); its autoscaler keeps 1 VM.
    cost = plan_stack("prod").as_json()["cost"]
    (item,) = [
        i for i in cost["items"] if i["urn"].endswith("::small-l4-group") and i["category"] == "accelerator"
    ]
    assert (item["min_size"], item["max_size"]) == (1, 2)
    assert 0 < item["hourly_min"] < item["hourly_max"]
    assert item["hourly_min"] == pytest.approx(item["hourly_max"] / 2, rel=0.01)  # one VM of two
