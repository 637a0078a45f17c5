"""The previous release's stack keys of the fleets and endpoints: accepted for one release, each with a
warning that names the new camelCase key (and what to write where the shape changed)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from pydantic.alias_generators import to_snake

from inference_infra.components.fleet import CapacityMode
from inference_infra.components.offline_plan import plan
from inference_infra.infra.stack_file import ConfigError, parse_stack_settings

REPO = Path(__file__).resolve().parents[2]
BASE = {"costCenter": "ml-platform", "owner": "ml-team@example.com", "gcpModelBucket": "acme-models"}
GPU = {"name": "l4", "machineType": "g2-standard-8"}
TPU = {"name": "tpu", "acceleratorType": "v5litepod-8"}
AWS_ENDPOINT = {"name": "llm", "cloud": "aws", "routes": [{"pools": [{"pool": "serving"}]}]}
GCP_ENDPOINT = {"name": "gcp-llm", "cloud": "gcp", "routes": [{"pools": [{"pool": "l4"}]}]}
ACCEPTED = "the old key is accepted until the next release, rename it"


def _parse(**sections: object):
    raw = {**BASE, **{key: json.dumps(value) for key, value in sections.items()}}
    return parse_stack_settings(raw, stack="dev")


def _warning(old: str, new: str, write: str | None = None) -> str:
    written = f" (write {write})" if write else ""
    return f"Pulumi.dev.yaml: inference-infra:{old} is now inference-infra:{new}{written}; {ACCEPTED}"


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("clientRanges", "clientCidrBlocks", ["10.40.0.0/20"]),
        ("monitoringRanges", "monitoringCidrBlocks", ["10.20.0.0/16"]),
        ("labels", "tags", {"team": "ml"}),
    ],
)
@pytest.mark.parametrize(("section", "node"), [("gcpGpuFleets", {**GPU, "spot": 1}), ("tpuVms", TPU)])
def test_gcp_node_config_accepts_a_renamed_key_with_a_warning(section, node, old, new, value):
    settings = _parse(**{section: [{**node, old: value}]})
    (config,) = getattr(settings, "gcp_gpu_fleets" if section == "gcpGpuFleets" else "tpu_vms")
    assert getattr(config, to_snake(new)) == value
    assert settings.warnings == [_warning(f"{section}[0].{old}", f"{section}[0].{new}")]


@pytest.mark.parametrize(
    ("old", "counts", "write"),
    [
        ({"capacity": "spot", "count": 2}, {"spot": 2}, "spot: 2"),
        ({"capacity": "on-demand"}, {"on_demand": 1}, "onDemand: 1"),  # count was 1 by default
        ({"capacity": "reserved", "count": 1}, {"reserved": 1}, "reserved: 1, reservation: {}"),
    ],
)
def test_gcp_fleet_config_turns_the_old_capacity_and_count_into_a_count_per_mode(old, counts, write):
    settings = _parse(gcpGpuFleets=[{**GPU, **old}])
    (fleet,) = settings.gcp_gpu_fleets
    args = fleet.to_args(subnetwork="s")
    assert {mode: getattr(args, mode) for mode in counts} == counts
    assert args.count is None
    mode = next(iter(counts))
    if mode == "reserved":  # the fleet makes its own reservation, as it did
        assert args.reservation is not None
        assert args.reservation.existing_name is None
    key = "onDemand" if mode == "on_demand" else mode
    assert settings.warnings == [_warning("gcpGpuFleets[0].capacity", f"gcpGpuFleets[0].{key}", write)]


def test_gcp_fleet_config_old_reserved_capacity_keeps_a_named_reservation():
    reservation = {"existingName": "h100-pool"}
    settings = _parse(gcpGpuFleets=[{**GPU, "capacity": "reserved", "count": 2, "reservation": reservation}])
    args = settings.gcp_gpu_fleets[0].to_args(subnetwork="s")
    assert (args.reserved, args.reservation.existing_name) == (2, "h100-pool")
    assert settings.warnings == [
        _warning("gcpGpuFleets[0].capacity", "gcpGpuFleets[0].reserved", "reserved: 2")
    ]


@pytest.mark.parametrize("mode", ["spot", "on-demand", "preemptible", "reserved"])
def test_tpu_config_turns_the_old_scheduling_into_one_slice_of_its_mode(mode):
    settings = _parse(tpuVms=[{**TPU, "scheduling": mode}])
    args = settings.tpu_vms[0].to_args(subnetwork="s")
    counts = {m: getattr(args, m) for m in ("reserved", "spot", "on_demand", "preemptible")}
    key = {CapacityMode.ON_DEMAND: "on_demand"}.get(CapacityMode(mode), mode)
    assert counts == {m: int(m == key) for m in counts}
    camel = "onDemand" if key == "on_demand" else key
    assert settings.warnings == [_warning("tpuVms[0].scheduling", f"tpuVms[0].{camel}", f"{camel}: 1")]


def test_gcp_fleet_config_rejects_an_unknown_old_capacity_naming_the_modes():
    with pytest.raises(ConfigError, match=r"gcpGpuFleets\[0\].capacityOrder\[0\] = 'cheap': Input should be"):
        _parse(gcpGpuFleets=[{**GPU, "capacity": "cheap"}])


def test_gcp_fleet_config_rejects_an_old_capacity_next_to_its_new_count():
    with pytest.raises(ConfigError, match=r"gcpGpuFleets\[0\].capacity 'spot' is the old name of"):
        _parse(gcpGpuFleets=[{**GPU, "capacity": "spot", "spot": 1}])


@pytest.mark.parametrize(
    ("endpoint", "old", "value", "new", "expected", "write"),
    [
        (AWS_ENDPOINT, "scheme", "internet-facing", "internetFacing", True, "internetFacing: true"),
        (AWS_ENDPOINT, "scheme", "internal", "internetFacing", False, "internetFacing: false"),
        (AWS_ENDPOINT, "idleTimeoutSeconds", 600, "requestTimeoutSeconds", 600, None),
        (GCP_ENDPOINT, "scheme", "internal", "internetFacing", False, "internetFacing: false"),
        (GCP_ENDPOINT, "idleTimeoutSeconds", 600, "requestTimeoutSeconds", 600, None),
        (GCP_ENDPOINT, "timeoutSeconds", 600, "requestTimeoutSeconds", 600, None),
        (GCP_ENDPOINT, "labels", {"team": "ml"}, "tags", {"team": "ml"}, None),
    ],
)
def test_endpoint_config_accepts_an_old_key_with_a_warning(endpoint, old, value, new, expected, write):
    settings = _parse(endpoints=[{**endpoint, old: value}])
    (config,) = settings.endpoints
    assert getattr(config, to_snake(new)) == expected
    assert settings.warnings == [_warning(f"endpoints[0].{old}", f"endpoints[0].{new}", write)]


def test_endpoint_config_rejects_keys_of_the_other_cloud():
    with pytest.raises(ConfigError, match=r"endpoints\[0\].certificateArn is not a setting here"):
        _parse(endpoints=[{**GCP_ENDPOINT, "certificateArn": "arn:aws:acm:us-east-1:1:certificate/x"}])


def test_endpoint_config_rejects_an_unknown_cloud_naming_the_clouds():
    with pytest.raises(ConfigError, match=r"endpoints\[0\].cloud = 'azure': must be one of 'aws', 'gcp'"):
        _parse(endpoints=[{**AWS_ENDPOINT, "cloud": "azure"}])


# --- a whole stack file of the previous release ---------------------------------------------------


def _previous_release(config: dict) -> tuple[dict, list[str]]:
    """Pulumi.prod.yaml's config written with the previous release's keys, and the old keys' paths."""
    old = copy.deepcopy(config)
    used: list[str] = []

    def rename(section: dict, where: str, new: str, previous: str) -> None:
        if new in section:
            section[previous] = section.pop(new)
            used.append(f"{where}.{previous}")

    for i, fleet in enumerate(old["inference-infra:gcpGpuFleets"]):
        where = f"gcpGpuFleets[{i}]"
        mode = next(m for m in ("reserved", "spot") if m in fleet)
        fleet.update(capacity=mode, count=fleet.pop(mode))
        if fleet.get("reservation") == {}:
            del fleet["reservation"]
        used.append(f"{where}.capacity")
        rename(fleet, where, "clientCidrBlocks", "clientRanges")
        rename(fleet, where, "monitoringCidrBlocks", "monitoringRanges")
    for i, tpu in enumerate(old["inference-infra:tpuVms"]):
        where = f"tpuVms[{i}]"
        if "spot" in tpu:
            tpu["scheduling"] = "spot" if tpu.pop("spot") == 1 else "?"
            used.append(f"{where}.scheduling")
        rename(tpu, where, "monitoringCidrBlocks", "monitoringRanges")
    for i, endpoint in enumerate(old["inference-infra:endpoints"]):
        endpoint["scheme"] = "internal"
        used.append(f"endpoints[{i}].scheme")
    old["inference-infra:endpoints"][0]["idleTimeoutSeconds"] = 900
    used.append("endpoints[0].idleTimeoutSeconds")
    old["inference-infra:awsGpuFleets"][1]["inferencePort"] = 8000
    used.append("awsGpuFleets[1].inferencePort")
    rename(old["inference-infra:watchdog"], "watchdog", "scheduleExpression", "schedule")
    return old, used


def _resources(result) -> set[tuple[str, str, str, str]]:
    return {
        (
            r.type,
            r.name,
            (r.parent or "").rsplit("::", 1)[-1],
            json.dumps(r.props, sort_keys=True, default=str),
        )
        for r in result.capture.resources
    }


def test_a_stack_file_with_the_old_keys_plans_the_same_resources_with_one_warning_per_old_key(
    tmp_path, plan_stack
):
    config = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text())["config"]
    old, used = _previous_release(config)
    assert len(used) == 13
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / "Pulumi.prod.yaml").write_text(yaml.safe_dump({"config": old}))
    result = plan(tmp_path, "prod")
    assert _resources(result) == _resources(plan_stack("prod"))
    warnings = [w for w in result.warnings() if ACCEPTED in w]
    named = [w.removeprefix("Pulumi.prod.yaml: inference-infra:").split(" is now ")[0] for w in warnings]
    assert sorted(named) == sorted(used)


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_reference_stack_files_use_no_old_key(plan_stack, stack):
    assert [w for w in plan_stack(stack).warnings() if ACCEPTED in w] == []
