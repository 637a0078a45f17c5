"""The stack-wide machine bound counts every section that makes machines, not only the VM fleets.

Kubernetes pools were bounded one by one (1,000 each) but never together: a stack file holds up to
100 of them (MAX_ITEMS), so 100,000 nodes passed the stack's 10,000. A pool's counts are replicas of
`hostsPerReplica` nodes each (a LeaderWorkerSet group), and an elastic entry may grow to its
`elastic.maxSize` and keep `elastic.warmPoolSize` stopped machines beside: all of them count, in the
raw check (infra/stack_bounds.py, before the typed config is built) and in the typed config
(StackSettings.bound_problems), with the same words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inference_infra.components.errors import ConfigError
from inference_infra.infra.stack_bounds import (
    FleetMachines,
    decode,
    machine_problems,
    raw_fleet_machines,
    refuse_machines_over_bounds,
)
from tests.infra.test_stack_bounds import _measured, _plan, _project
from tests.infra.test_stack_bounds import _raw as _engine_raw

ROOT = Path(__file__).resolve().parents[2]
PROD = (ROOT / "Pulumi.prod.yaml").read_text()
DEV = (ROOT / "Pulumi.dev.yaml").read_text()
# The prod stack's one Kubernetes pool, as the stack file writes it (the entry up to the next key).
POOL = re.search(
    r"  inference-infra:kubernetesPools:\n(    - name: llama-8b-eks\n(?:      .*\n|        .*\n)+)", PROD
)


def _raw(stack_text: str) -> dict[str, str]:
    """The stack's values as the engine hands them, its secrets decrypted (to placeholders)."""
    raw = _engine_raw(stack_text)
    secrets = json.loads(raw.get("observabilitySecrets", "{}"))
    raw["observabilitySecrets"] = json.dumps({k: f"placeholder-{k}" for k in secrets})
    return raw


def _pools(n: int, counts: str) -> str:
    """The prod stack with its one Kubernetes pool repeated `n` times (distinct names), `counts` in
    place of its `onDemand: 1` / `spot: 1`."""
    assert POOL is not None
    entry = POOL.group(1).replace("      onDemand: 1\n      spot: 1\n", counts)
    assert entry != POOL.group(1)
    pools = "".join(entry.replace("name: llama-8b-eks", f"name: llama-8b-eks-{i}", 1) for i in range(n))
    return PROD.replace(POOL.group(1), pools, 1)


# Each pool under its own bound (maxMachines 1,000), eleven of them over the stack's 10,000 together.
OVER_THE_STACK = {
    "eleven pools of 1,000": _pools(11, "      spot: 1000\n"),
    "replicas of 4 hosts": _pools(11, "      spot: 250\n      hostsPerReplica: 4\n"),
    "elastic maxima": _pools(11, "      spot: 1\n      elastic: {maxSize: 1000, minSize: 1}\n"),
}


@pytest.mark.parametrize("stack", OVER_THE_STACK.values(), ids=OVER_THE_STACK.keys())
def test_stack_bounds_rejects_kubernetes_pools_over_the_stack_bound_together(stack):
    raw = _raw(stack)
    with pytest.raises(ConfigError) as early:
        refuse_machines_over_bounds(raw, stack="bad")
    text = str(early.value)
    assert text.startswith(
        "invalid stack config in Pulumi.bad.yaml: the stack's fleets and Kubernetes pools 11"
    ), text
    assert "must have at most 10,000 machines in all (inference-infra:maxMachines" in text
    assert "inference-infra:kubernetesPools 11,000" in text


@pytest.mark.parametrize("stack", OVER_THE_STACK.values(), ids=OVER_THE_STACK.keys())
def test_stack_bounds_typed_config_refuses_the_pools_with_the_same_words(stack):
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(stack)
    with pytest.raises(ConfigError) as early:
        refuse_machines_over_bounds(raw, stack="bad")
    with pytest.raises(ConfigError) as typed:
        parse_stack_settings(raw, stack="bad")
    assert str(typed.value) == str(early.value)


@pytest.mark.slow
def test_stack_bounds_rejects_many_pools_from_the_cli_in_one_paragraph_before_anything_loads(tmp_path):
    result = _measured(_project(tmp_path, _pools(11, "      spot: 250\n      hostsPerReplica: 4\n")))
    assert result["code"] == 2
    err = " ".join(result["err"].split())
    assert err == (
        "inference-infra: invalid stack config in Pulumi.bad.yaml: the stack's fleets and Kubernetes pools "
        "11019 must have at most 10,000 machines in all (inference-infra:maxMachines; raise it for a larger "
        "stack, up to 20,000); each counted at its peak (its counts or elastic.maxSize, the larger, times a "
        "pool's hostsPerReplica or a TPU slice's hosts, plus elastic.warmPoolSize): "
        "inference-infra:awsGpuFleets 13, "
        "inference-infra:awsInferentiaFleets 2, inference-infra:gcpGpuFleets 3, inference-infra:tpuVms 1, "
        "inference-infra:kubernetesPools 11,000."
    ), err
    assert "Traceback" not in result["err"]
    assert "\n\n" not in result["err"].strip()  # one paragraph (wrapped)
    assert result["imported"] == []  # refused from the raw file: no typed config, no provider SDK
    # CPU seconds of the whole process, interpreter start-up included: 0.68-0.94 s measured 2026-12-02
    # on the shared 2-core machine at load 2.7 (the prod stack is larger than test_stack_bounds' dev)
    assert result["cpu"] < 1.5, result


def test_stack_bounds_pool_under_the_stack_bound_passes(capsys):
    raw = _raw(_pools(9, "      spot: 250\n      hostsPerReplica: 4\n"))
    refuse_machines_over_bounds(raw, stack="bad")  # 9,000 nodes + the VM fleets: under 10,000
    pools = [f for f in raw_fleet_machines(decode(raw)) if f.key.startswith("kubernetesPools")]
    assert [(f.machines, f.hosts, f.peak) for f in pools] == [(250, 4, 1000)] * 9


ONE_POOL_OVER_ITS_OWN = {
    "replicas times hosts": (
        "      spot: 300\n      hostsPerReplica: 4\n",
        "inference-infra:kubernetesPools[0].hostsPerReplica 4 makes 300 replica(s) of 4 machines each "
        "1,200 machines; a fleet has at most 1,000 (its maxMachines",
    ),
    "elastic.maxSize": (
        "      spot: 1\n      elastic: {maxSize: 5000}\n",
        "inference-infra:kubernetesPools[0].elastic.maxSize 5000 must be at most 1,000 machines in one fleet",
    ),
}


@pytest.mark.parametrize(
    ("counts", "expected"), ONE_POOL_OVER_ITS_OWN.values(), ids=ONE_POOL_OVER_ITS_OWN.keys()
)
def test_stack_bounds_rejects_a_pool_over_its_own_bound_by_its_nodes(counts, expected):
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(_pools(1, counts))
    with pytest.raises(ConfigError, match=re.escape(expected)) as early:
        refuse_machines_over_bounds(raw, stack="bad")
    with pytest.raises(ConfigError) as typed:
        parse_stack_settings(raw, stack="bad")
    assert str(typed.value) == str(early.value)


def test_stack_bounds_rejects_a_vm_fleets_elastic_maximum_over_its_bound(capsys, tmp_path):
    """An AWS fleet of one machine whose elastic.maxSize says 5,000: its Auto Scaling group's max."""
    stack = PROD.replace("      elastic: {}\n", "      elastic: {maxSize: 5000}\n", 1)
    assert stack != PROD
    code, err = _plan(capsys, _project(tmp_path, stack))
    assert code == 2
    assert re.search(r"inference-infra:awsGpuFleets\[\d\]\.elastic\.maxSize 5000 must be at most 1,000", err)


def test_stack_bounds_counts_warm_pools_and_elastic_maxima_toward_the_stack():
    fleets = [
        FleetMachines("awsGpuFleets[0]", {"onDemand": 2}, None, 1000, elastic_max=600, warm=400),
        FleetMachines("kubernetesPools[0]", {"spot": 2}, None, 1000, hosts=2, elastic_max=500),
    ]
    assert [f.peak for f in fleets] == [1000, 1000]
    assert machine_problems(fleets, stack_max=2000) == []
    (problem,) = machine_problems(fleets, stack_max=1999)
    assert problem.value == 2000
    assert "inference-infra:awsGpuFleets 1,000, inference-infra:kubernetesPools 1,000" in problem.allowed


def test_stack_bounds_rejects_a_warm_pool_over_the_fleets_bound():
    (problem,) = machine_problems([FleetMachines("awsGpuFleets[0]", {"onDemand": 2}, None, 1000, warm=1001)])
    assert problem.input == "inference-infra:awsGpuFleets[0].elastic.warmPoolSize"
    assert problem.value == 1001


def test_stack_bounds_reads_every_machine_making_entry_of_the_reference_stacks():
    for name in ("dev", "prod"):
        text = (ROOT / f"Pulumi.{name}.yaml").read_text()
        values = decode(_raw(text))
        read = {f.key for f in raw_fleet_machines(values)}
        listed = {
            f"{section}[{i}]"
            for section in (
                "awsGpuFleets",
                "awsInferentiaFleets",
                "gcpGpuFleets",
                "tpuVms",
                "kubernetesPools",
            )
            for i, _ in enumerate(values.get(section) or [])
        }
        assert read == listed, name
    assert any(k.startswith("kubernetesPools") for k in read)  # prod's pool is counted


TPU_OVER = {
    "a slice named by its type": ("acceleratorType: v6e-256", "acceleratorType 'v6e-256'", 16, 1024),
    "a slice named by generation and topology": (
        "{generation: v6e, topology: 16x16}",
        "topology '16x16'",
        16,
        1024,
    ),
}


def _tpu_stack(shape: str, slices: int) -> str:
    """The dev stack with one TPU entry of `slices` spot slices of the given shape."""
    if shape.startswith("{"):
        shape = "\n      ".join(
            f"{k.strip()}: {v.strip()}" for k, v in (p.split(":") for p in shape[1:-1].split(","))
        )
    entry = f"  inference-infra:tpuVms:\n    - name: big-tpu\n      {shape}\n      spot: {slices}\n"
    return DEV + entry


@pytest.mark.parametrize(("shape", "named", "slices", "machines"), TPU_OVER.values(), ids=TPU_OVER.keys())
def test_stack_bounds_counts_a_tpu_slices_hosts(shape, named, slices, machines):
    """16 slices of v6e-256 are 16 x 64 = 1,024 TPU VMs: over a fleet's 1,000, not 16 machines."""
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(_tpu_stack(shape, slices))
    with pytest.raises(ConfigError) as early:
        refuse_machines_over_bounds(raw, stack="bad")
    assert (
        f"inference-infra:tpuVms[0].{named} makes {slices} slice(s) of 64 machines each {machines:,} "
        "machines; a fleet has at most 1,000 (its maxMachines"
    ) in str(early.value)
    with pytest.raises(ConfigError) as typed:
        parse_stack_settings(raw, stack="bad")
    assert str(typed.value) == str(early.value)


def test_stack_bounds_tpu_hosts_count_toward_the_stack():
    raw = _raw(_tpu_stack("acceleratorType: v6e-256", 15))
    refuse_machines_over_bounds(raw, stack="bad")  # 960 TPU VMs: under the fleet's and the stack's bounds
    (tpu,) = [f for f in raw_fleet_machines(decode(raw)) if f.key == "tpuVms[0]"]
    assert (tpu.machines, tpu.hosts, tpu.peak) == (15, 64, 960)
    raw["maxMachines"] = "900"
    with pytest.raises(ConfigError, match=r"inference-infra:tpuVms 960"):
        refuse_machines_over_bounds(raw, stack="bad")


def test_limits_tpu_slice_hosts_read_as_the_catalog_does():
    """The standard-library reading of the catalog's shapes (components/limits.py) agrees with the
    catalog for every TPU slice, by name and by generation and topology."""
    from inference_infra.components.catalog import Cloud, find_instance_type
    from inference_infra.components.catalog.tpu_runtimes import TPU_SOFTWARE
    from inference_infra.components.limits import tpu_hosts_by_slice, tpu_slice_hosts

    slices = tpu_hosts_by_slice()
    assert len(slices) >= 20
    for name, hosts in slices.items():
        item = find_instance_type(name, Cloud.GCP)
        assert item is not None, name
        assert item.hosts == hosts, name
        (software,) = [s for s in TPU_SOFTWARE if s.accelerator == item.accelerator]
        assert tpu_slice_hosts(generation=software.generation, topology=item.tpu_topology) == hosts, name
    assert tpu_slice_hosts("v6e-256") == 64
    assert tpu_slice_hosts("v6e-999") is None
    assert tpu_slice_hosts() is None
