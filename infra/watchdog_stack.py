"""The stack's idle-GPU watchdog part: one IdleGpuWatchdog for the stack's AWS region.

It stops instances tagged `AutoShutdown=true` (the tag the cost-tag transform
and the fleets set) and reads the utilization metrics the AWS fleets' agents
publish, so the metric names come from the fleets' bootstrap constants.
"""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

from inference_infra.components.aws.bootstrap import (
    GPU_UTILIZATION_METRIC,
    METRIC_NAMESPACE,
    NEURON_UTILIZATION_METRIC,
)
from inference_infra.components.aws.idle_watchdog import IdleGpuWatchdogArgs, validate_idle_watchdog
from inference_infra.components.errors import Problem
from inference_infra.components.tagging import AUTO_SHUTDOWN, bool_tag
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, StackSettings, WatchdogSettings

COMPONENT_NAME = "idle-gpu-watchdog"
# Component argument -> its key under inference-infra:watchdog (when the spelling differs).
_CONFIG_KEY = {"schedule_expression": "schedule"}


def watchdog_args(config: WatchdogSettings) -> IdleGpuWatchdogArgs:
    return IdleGpuWatchdogArgs(
        tag_key=AUTO_SHUTDOWN,
        tag_value=bool_tag(True),
        idle_minutes=config.idle_minutes,
        util_threshold_percent=config.util_threshold_percent,
        grace_minutes=config.grace_minutes,
        dry_run=config.dry_run,
        schedule_expression=config.schedule,
        metric_namespace=METRIC_NAMESPACE,
        metric_name=GPU_UTILIZATION_METRIC,
        neuron_metric_namespace=METRIC_NAMESPACE,
        neuron_metric_name=NEURON_UTILIZATION_METRIC,
        stop_reserved_capacity=config.stop_reserved_capacity,
        sns_topic_arn=config.sns_topic_arn,
        create_sns_topic=config.create_sns_topic,
        kms_key_arn=config.kms_key_arn,
        log_retention_days=config.log_retention_days,
    )


def validate(settings: StackSettings) -> list[Problem]:
    if settings.watchdog is None:
        return []
    return [
        Problem(f"{NAMESPACE}:watchdog.{_CONFIG_KEY.get(p.input) or to_camel(p.input)}", p.value, p.allowed)
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
