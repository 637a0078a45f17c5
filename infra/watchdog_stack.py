"""The stack's idle-GPU watchdog part: one IdleGpuWatchdog for the stack's AWS region.

It stops instances tagged `AutoShutdown=true` (the tag the cost-tag transform
and the fleets set) and reads the utilization metrics the AWS fleets' agents
publish, so the metric names come from the fleets' bootstrap constants.
"""

from __future__ import annotations

from typing import Any

from inference_infra.components.aws.bootstrap import (
    GPU_UTILIZATION_METRIC,
    METRIC_NAMESPACE,
    NEURON_UTILIZATION_METRIC,
)
from inference_infra.components.aws.idle_watchdog_args import IdleGpuWatchdogArgs, validate_idle_watchdog
from inference_infra.components.errors import Problem
from inference_infra.components.tagging import AUTO_SHUTDOWN, bool_tag
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, StackSettings, WatchdogSettings
from inference_infra.infra.schema import camel_path

COMPONENT_NAME = "idle-gpu-watchdog"


def watchdog_args(config: WatchdogSettings) -> IdleGpuWatchdogArgs:
    """The section's inputs, plus the opt-in tag and the metrics the stack's fleets publish."""
    return config.to_args(
        tag_key=AUTO_SHUTDOWN,
        tag_value=bool_tag(True),
        metric_namespace=METRIC_NAMESPACE,
        metric_name=GPU_UTILIZATION_METRIC,
        neuron_metric_namespace=METRIC_NAMESPACE,
        neuron_metric_name=NEURON_UTILIZATION_METRIC,
    )


def validate(settings: StackSettings) -> list[Problem]:
    if settings.watchdog is None:
        return []
    return [
        Problem(f"{NAMESPACE}:watchdog.{camel_path(p.input)}", p.value, p.allowed)
        for p in validate_idle_watchdog(watchdog_args(settings.watchdog))
    ]


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.aws.idle_watchdog import IdleGpuWatchdog

    if settings.watchdog is None:
        return {}
    watchdog = IdleGpuWatchdog(COMPONENT_NAME, watchdog_args(settings.watchdog))
    outputs: dict[str, Any] = {
        "idleWatchdogFunction": watchdog.function_name,
        "idleWatchdogSchedule": watchdog.schedule_arn,
        "idleWatchdogDeadLetterQueue": watchdog.dead_letter_queue_url,
    }
    if watchdog.topic_arn is not None:
        outputs["idleWatchdogTopic"] = watchdog.topic_arn
    return outputs
