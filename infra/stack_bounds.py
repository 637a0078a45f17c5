"""A stack file's raw values and its machine bounds, read before the typed config is built.

The typed config (`infra/config.py`) is some sixty models over every component's inputs; building
them and importing the components takes most of a second. A pool of 100,000 machines (a typo, or a
hostile pull request) should not wait for that, nor get further: `refuse_machines_over_bounds` reads
the counts from the raw values and refuses any fleet or Kubernetes pool above its `maxMachines`, and
all of them together at their peak (a pool's replicas times their hosts, an elastic entry at its
maxSize, warm pools' stopped machines) above the stack's, with the same error the typed config
gives; and any list or map longer than
MAX_ITEMS. It is the standard library only (and Pulumi's runtime config, already loaded by the
program). A value it cannot read as a count is left to the typed config, which reports it; the
typed config applies the same bounds (`StackSettings.bound_problems` calls `machine_problems`, and
`parse_stack_settings` calls `item_problems`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from inference_infra.components.errors import ConfigError, Problem
from inference_infra.components.input_size import MAX_PROJECT_FILE_BYTES
from inference_infra.components.limits import (
    MAX_MACHINES_PER_FLEET,
    MAX_MACHINES_PER_FLEET_CEILING,
    tpu_slice_hosts,
)

NAMESPACE = "inference-infra"

# The most machines all of a stack's fleets may have together unless its maxMachines says more, and
# the most it may say: a plan holds every machine's resources in memory (benchmarks/plan_scale.py:
# about 0.2 MiB per resource), so 20,000 machines is a plan of several GiB.
MAX_MACHINES_PER_STACK = 10_000
MAX_MACHINES_PER_STACK_CEILING = 20_000

# The most entries any list or map of a stack file may have: a guard against a list of 100,000
# endpoints or CIDR blocks, each of which the plan would build. The reference stacks' longest has 13.
MAX_ITEMS = 100

# The stack keys that make machines, and the keys of an entry that count them, in the order an error
# names them. A Kubernetes pool's counts are replicas of `hostsPerReplica` nodes each, a TPU entry's are
# slices of the catalog's hosts each (v6e-256: 64 TPU VMs); an elastic entry may grow to
# `elastic.maxSize` and keep `elastic.warmPoolSize` stopped machines beside.
FLEET_SECTIONS = ("awsGpuFleets", "awsInferentiaFleets", "gcpGpuFleets", "tpuVms", "kubernetesPools")
MODE_KEYS = ("reserved", "spot", "onDemand", "preemptible")
HOSTS_KEY = "hostsPerReplica"


@dataclass(frozen=True)
class FleetMachines:
    """One fleet's (or Kubernetes pool's) machine counts as the stack file gives them."""

    key: str  # the fleet's stack key, e.g. awsGpuFleets[0]
    modes: Mapping[str, int]  # count per capacity mode (MODE_KEYS)
    count: int | None  # `count` (with capacityOrder) instead of per-mode counts
    max_machines: int = MAX_MACHINES_PER_FLEET
    hosts: int = 1  # machines one counted replica spans (a pool's hostsPerReplica, a TPU slice's hosts)
    elastic_max: int | None = None  # elastic.maxSize when given: the most replicas it may scale to
    warm: int = 0  # elastic.warmPoolSize when given: stopped machines kept beside the running ones
    hosts_input: tuple[str, Any] = (HOSTS_KEY, None)  # the key and value that set `hosts`
    unit: str = "replica"  # what the counts count when one spans hosts: replica or slice

    @property
    def machines(self) -> int:
        """The counts: machines, or replicas when a replica spans hosts."""
        return self.count if self.count is not None else sum(max(n, 0) for n in self.modes.values())

    @property
    def replicas(self) -> int:
        """The most replicas at once: the counts, or elastic.maxSize when larger."""
        return max(self.machines, self.elastic_max or 0)

    @property
    def peak(self) -> int:
        """The most machines it may hold at once: replicas times their hosts, plus a warm pool's."""
        return self.replicas * self.hosts + self.warm


def _fleet_problem(fleet: FleetMachines) -> Problem | None:
    """The first of a fleet's inputs that takes it over its own maxMachines, or None."""
    limit = fleet.max_machines
    allowed = (
        f"must be at most {limit:,} machines in one fleet (its maxMachines; raise it for a larger pool, "
        f"up to {MAX_MACHINES_PER_FLEET_CEILING:,})"
    )
    where = f"{NAMESPACE}:{fleet.key}"
    if fleet.machines > limit:
        named = "count" if fleet.count is not None else "+".join(k for k, n in fleet.modes.items() if n > 0)
        return Problem(f"{where}.{named}", fleet.machines, allowed)
    if fleet.elastic_max is not None and fleet.elastic_max > limit:
        return Problem(f"{where}.elastic.maxSize", fleet.elastic_max, allowed)
    if fleet.replicas * fleet.hosts > limit:
        key, value = fleet.hosts_input
        return Problem(
            f"{where}.{key}",
            fleet.hosts if value is None else value,
            f"makes {fleet.replicas:,} {fleet.unit}(s) of {fleet.hosts} machines each "
            f"{fleet.replicas * fleet.hosts:,} machines; a fleet has at most {limit:,} (its maxMachines; "
            f"raise it for a larger pool, up to {MAX_MACHINES_PER_FLEET_CEILING:,})",
        )
    if fleet.warm > limit:
        return Problem(f"{where}.elastic.warmPoolSize", fleet.warm, allowed)
    return None


def machine_problems(
    fleets: Iterable[FleetMachines], stack_max: int = MAX_MACHINES_PER_STACK
) -> list[Problem]:
    """Each fleet's machines against its maxMachines, and all of them at their peak against the
    stack's: VM fleets and Kubernetes pools alike, a pool's replicas times their hosts, an elastic
    entry at its maxSize when that is larger than its counts, a warm pool's stopped machines too."""
    fleets = list(fleets)
    problems = [p for p in map(_fleet_problem, fleets) if p is not None]
    total = sum(fleet.peak for fleet in fleets)
    if total > stack_max and not problems:  # a fleet over its own bound says it once
        sections: dict[str, int] = {}
        for fleet in fleets:
            section = fleet.key.split("[", 1)[0]
            sections[section] = sections.get(section, 0) + fleet.peak
        counted = ", ".join(f"{NAMESPACE}:{s} {n:,}" for s, n in sections.items() if n)
        problems.append(
            Problem(
                "the stack's fleets and Kubernetes pools",
                total,
                f"must have at most {stack_max:,} machines in all ({NAMESPACE}:maxMachines; raise it for a "
                f"larger stack, up to {MAX_MACHINES_PER_STACK_CEILING:,}); each counted at its peak (its "
                f"counts or elastic.maxSize, the larger, times a pool's {HOSTS_KEY} or a TPU slice's "
                f"hosts, plus elastic.warmPoolSize): "
                f"{counted}",
            )
        )
    return problems


def size_problems(raw: Mapping[str, str]) -> list[Problem]:
    """The stack's values together over the stack file's bound (input_size.MAX_PROJECT_FILE_BYTES),
    counted as the engine hands them, before any is decoded: under `pulumi up` the engine has read
    the file, but the program should not go on to decode and validate megabytes of values."""
    size = sum(len(k.encode()) + len(v.encode()) for k, v in raw.items() if isinstance(v, str))
    if size <= MAX_PROJECT_FILE_BYTES:
        return []
    return [
        Problem(
            f"the {NAMESPACE}: values",
            f"{size:,} bytes",
            f"must be at most {MAX_PROJECT_FILE_BYTES:,} bytes together (the stack file's bound)",
        )
    ]


def decode(raw: Mapping[str, str]) -> dict[str, Any]:
    """Engine strings -> Python values: objects and lists arrive JSON-encoded."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str) and value[:1] in "[{":
            try:
                out[key] = json.loads(value)
                continue
            except (json.JSONDecodeError, RecursionError):  # left a string: the typed config names it
                pass
        out[key] = value
    return out


def raw_stack_values() -> dict[str, str]:
    """The current stack's `inference-infra:` keys (namespace stripped) as the engine hands them."""
    from pulumi.runtime import config as runtime_config

    prefix = f"{NAMESPACE}:"
    merged = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return {k[len(prefix) :]: v for k, v in merged.items() if k.startswith(prefix)}


def _count(value: Any, *, low: int = 0, high: int | None = None) -> int | None:
    """An int the stack file wrote (a top-level value arrives as a string); None for anything else."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        return None
    return None if high is not None and value > high else value


def tpu_hosts(accelerator_type: Any, generation: Any, topology: Any) -> tuple[int, dict[str, Any]]:
    """A TPU entry's hosts per slice (components/limits.tpu_slice_hosts; 1 for a slice the catalog does
    not have, which the typed config refuses, or the planner's one-host pick) and the FleetMachines
    fields naming the key that set them."""
    hosts = tpu_slice_hosts(accelerator_type, generation, topology)
    if hosts is None:
        return 1, {}
    named = ("acceleratorType", accelerator_type) if accelerator_type is not None else ("topology", topology)
    return hosts, {"hosts_input": named, "unit": "slice"}


def raw_fleet_machines(values: Mapping[str, Any]) -> list[FleetMachines]:
    """The fleets whose counts read as ints (values decoded); the rest are the typed config's to report."""
    found = []
    for section in FLEET_SECTIONS:
        fleets = values.get(section)
        for i, fleet in enumerate(fleets if isinstance(fleets, list) else []):
            read = _raw_fleet(section, i, fleet) if isinstance(fleet, Mapping) else None
            if read is not None:
                found.append(read)
    return found


def _raw_fleet(section: str, i: int, fleet: Mapping[str, Any]) -> FleetMachines | None:
    """One entry's counts, or None when one of them does not read as a count."""
    limit = _count(
        fleet.get("maxMachines", MAX_MACHINES_PER_FLEET), low=1, high=MAX_MACHINES_PER_FLEET_CEILING
    )
    modes = {k: _count(fleet.get(k, 0)) for k in MODE_KEYS}
    count = _count(fleet["count"]) if "count" in fleet else None
    # A Kubernetes pool's hostsPerReplica (null: the planner's, at least 1); a VM fleet has none.
    hosts = _count(fleet.get(HOSTS_KEY) or 1, low=1) if section == "kubernetesPools" else 1
    shape: dict[str, Any] = {}
    if section == "tpuVms":
        hosts, shape = tpu_hosts(fleet.get("acceleratorType"), fleet.get("generation"), fleet.get("topology"))
    elastic = fleet.get("elastic")
    elastic = {} if elastic is None else elastic
    if not isinstance(elastic, Mapping):
        return None
    most = _count(elastic["maxSize"], low=1) if elastic.get("maxSize") is not None else None
    warm = _count(elastic.get("warmPoolSize") or 0)
    if (
        limit is None
        or any(n is None for n in modes.values())
        or ("count" in fleet and count is None)
        or hosts is None
        or (elastic.get("maxSize") is not None and most is None)
        or warm is None
    ):
        return None
    return FleetMachines(
        f"{section}[{i}]", {k: n or 0 for k, n in modes.items()}, count, limit, hosts, most, warm, **shape
    )


def item_problems(values: Mapping[str, Any]) -> list[Problem]:
    """Every list or map in the decoded values with more than MAX_ITEMS entries (the first of each
    key's), found without recursion (a value may nest as deep as its parser allowed)."""
    problems: list[Problem] = []
    for key, value in values.items():
        pending: list[tuple[str, Any]] = [(f"{NAMESPACE}:{key}", value)]
        while pending:
            path, node = pending.pop()
            if not isinstance(node, (list, dict)):
                continue
            if len(node) > MAX_ITEMS:
                allowed = f"entries; a list or map in a stack file has at most {MAX_ITEMS}"
                problems.append(Problem(f"{path} has", len(node), allowed))
                break
            items = node.items() if isinstance(node, dict) else enumerate(node)
            pending += [(f"{path}[{k}]" if isinstance(node, list) else f"{path}.{k}", v) for k, v in items]
    return problems


def refuse_machines_over_bounds(raw: Mapping[str, str], *, stack: str) -> None:
    """Raise the stack's ConfigError when a list or map is too long or its machine counts exceed a
    bound, before anything heavy is imported."""
    if problems := size_problems(raw):
        raise ConfigError(join_text(stack, [str(p) for p in problems]), problems)
    values = decode(raw)
    problems = item_problems(values)
    if not problems:
        stack_max = _count(
            values.get("maxMachines", MAX_MACHINES_PER_STACK), low=1, high=MAX_MACHINES_PER_STACK_CEILING
        )
        problems = machine_problems(raw_fleet_machines(values), stack_max or MAX_MACHINES_PER_STACK_CEILING)
    if problems:
        raise ConfigError(join_text(stack, [str(p) for p in problems]), problems)


def stack_file(stack: str) -> str:
    return f"Pulumi.{stack}.yaml"


def join_text(stack: str, parts: list[str]) -> str:
    """One paragraph naming the stack file and each problem."""
    where = f"invalid stack config in {stack_file(stack)}"
    if len(parts) == 1:
        return f"{where}: {parts[0]}."
    return (
        f"{where} ({len(parts)} problems): " + "; ".join(f"({i}) {p}" for i, p in enumerate(parts, 1)) + "."
    )
