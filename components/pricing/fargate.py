"""ECS services on Fargate: desired tasks x the task definition's vCPUs and memory, by the hour.

Fargate bills each running task per second for the vCPUs and memory its task
definition asks for (Linux on x86_64 or ARM64). A service's `desiredCount`
tasks run whether or not they serve traffic, so the plan prices them hourly as
compute. FARGATE_SPOT is discounted by a rate that moves and is not in the
catalog: a service that may place tasks there is priced at on-demand (the most
it can cost), saying so. Windows tasks (which add a per-vCPU licence fee), a
task definition the plan cannot find, or sizes not known offline are not
guessed: the service is listed as not priced with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference_infra.components.catalog.resources import resource_rate

_ARCHES = {"X86_64": "x86_64", "ARM64": "arm64"}


class FargateNotPricedError(Exception):
    """The service runs on Fargate but cannot be priced; the message says why."""


def fargate_capacity(props: Mapping[str, Any]) -> tuple[bool, bool]:
    """(runs on Fargate, may run on FARGATE_SPOT) for an ECS service's props."""
    providers = {
        s.get("capacityProvider")
        for s in props.get("capacityProviderStrategies") or []
        if isinstance(s, Mapping)
    }
    fargate = props.get("launchType") == "FARGATE" or bool(providers & {"FARGATE", "FARGATE_SPOT"})
    return fargate, "FARGATE_SPOT" in providers


def _vcpus(value: Any) -> float | None:
    """Task cpu: CPU units ("256", 1024 = 1 vCPU) or "0.25 vCPU"."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    try:
        if text.lower().endswith("vcpu"):
            return float(text[:-4])
        return float(text) / 1024 if text else None
    except ValueError:
        return None


def _gb(value: Any) -> float | None:
    """Task memory: MiB ("512") or "0.5 GB"."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    try:
        if text.lower().endswith("gb"):
            return float(text[:-2])
        return float(text) / 1024 if text else None
    except ValueError:
        return None


def find_task_definition(
    ref: Any, definitions: Sequence[tuple[str | None, Mapping[str, Any]]]
) -> Mapping[str, Any] | None:
    """The props of the task definition a service names: by ARN (its id or family:revision) or family."""
    if not isinstance(ref, str) or not ref:
        return None
    tail = ref.rsplit("/", 1)[-1]
    for ident, props in definitions:
        if ident and tail == ident:
            return props
    family = tail.split(":", 1)[0]
    for _, props in definitions:
        if props.get("family") == family:
            return props
    return None


def price_fargate_service(
    props: Mapping[str, Any],
    definitions: Sequence[tuple[str | None, Mapping[str, Any]]],
    region: str | None,
) -> tuple[float, str]:
    """Hourly USD and basis of an ECS service on Fargate. Raises FargateNotPricedError saying why."""
    _, spot = fargate_capacity(props)
    count = props.get("desiredCount", 0)
    if isinstance(count, bool) or not isinstance(count, (int, float)) or count < 0:
        raise FargateNotPricedError(f"Fargate service: desiredCount {count!r} is not a known task count")
    task = find_task_definition(props.get("taskDefinition"), definitions)
    if task is None:
        raise FargateNotPricedError(
            f"Fargate service: task definition {props.get('taskDefinition')!r} is not in the plan"
        )
    platform = task.get("runtimePlatform") if isinstance(task.get("runtimePlatform"), Mapping) else {}
    family = str(platform.get("operatingSystemFamily") or "LINUX")
    if family != "LINUX":
        raise FargateNotPricedError(f"Fargate service: {family} tasks are not in the catalog (Linux only)")
    arch = _ARCHES.get(str(platform.get("cpuArchitecture") or "X86_64"))
    if arch is None:
        raise FargateNotPricedError(f"Fargate service: cpuArchitecture {platform.get('cpuArchitecture')!r}")
    vcpus, gb = _vcpus(task.get("cpu")), _gb(task.get("memory"))
    if vcpus is None or gb is None or vcpus <= 0 or gb <= 0:
        raise FargateNotPricedError(
            f"Fargate service: task cpu {task.get('cpu')!r} / memory {task.get('memory')!r} not known offline"
        )
    cpu_rate, mem_rate = (
        resource_rate(f"aws.fargate.vcpu.{arch}"),
        resource_rate(f"aws.fargate.memory.{arch}"),
    )
    assert cpu_rate is not None  # rows of the catalog
    assert mem_rate is not None
    cpu_usd, where = cpu_rate.rate(region)
    mem_usd, _ = mem_rate.rate(region)
    each = vcpus * cpu_usd + gb * mem_usd
    basis = (
        f"{count:g} x Fargate Linux/{arch} task ({vcpus:g} vCPU x ${cpu_usd:g} + {gb:g} GB x ${mem_usd:g})/h"
    )
    if where != region:
        basis += f" {where}"
    if spot:
        basis += "; FARGATE_SPOT tasks priced at on-demand (no spot rate in the catalog)"
    return count * each, basis
