"""The stack's idle-GPU watchdog part: one IdleGpuWatchdog for the stack's AWS region, and one for its
GCP project when the stack has GCP GPU fleets or TPU VMs.

The AWS one stops instances tagged `AutoShutdown=true` (the tag the cost-tag transform
and the fleets set) and reads the utilization metrics the AWS fleets' agents
publish, so the metric names come from the fleets' bootstrap constants. The GCP one
(components/gcp/idle_watchdog.py) stops VMs and TPU VMs labelled `auto-shutdown=true` and takes the
section's shared settings (window, threshold, grace, dry run, schedule, period, reserved capacity; a
created topic becomes a Pub/Sub topic); its metrics are its defaults, the Ops Agent's NVML GPU
utilization and the TPU runtime's duty cycle, which the GCP fleets publish.
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
GCP_COMPONENT_NAME = "gcp-idle-gpu-watchdog"
# The section's settings that mean the same on GCP (components/gcp/idle_watchdog_args.py).
GCP_SHARED = (
    "idle_minutes",
    "util_threshold_percent",
    "grace_minutes",
    "dry_run",
    "schedule_expression",
    "metric_period_seconds",
    "stop_reserved_capacity",
)


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


def gcp_watchdog_args(config: WatchdogSettings) -> Any:
    """The GCP watchdog's inputs: the section's shared settings (the rest are AWS's)."""
    from inference_infra.components.gcp.idle_watchdog_args import IdleGpuWatchdogArgs as GcpArgs

    aws_args = watchdog_args(config)
    return GcpArgs(
        **{name: getattr(aws_args, name) for name in GCP_SHARED},
        create_pubsub_topic=aws_args.create_sns_topic,
        timeout_seconds=max(aws_args.timeout_seconds, 60),
    )


def has_gcp_accelerators(settings: StackSettings) -> bool:
    return bool(settings.gcp_gpu_fleets or settings.tpu_vms)


def validate(settings: StackSettings) -> list[Problem]:
    if settings.watchdog is None:
        return []
    problems = [
        Problem(f"{NAMESPACE}:watchdog.{camel_path(p.input)}", p.value, p.allowed)
        for p in validate_idle_watchdog(watchdog_args(settings.watchdog))
    ]
    if has_gcp_accelerators(settings) and not problems:
        from inference_infra.components.gcp.idle_watchdog_args import validate_idle_watchdog as validate_gcp

        problems += [
            Problem(f"{NAMESPACE}:watchdog.{camel_path(p.input)} (GCP watchdog)", p.value, p.allowed)
            for p in validate_gcp(gcp_watchdog_args(settings.watchdog))
        ]
    return problems


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
    if has_gcp_accelerators(settings):
        from inference_infra.components.gcp.idle_watchdog import IdleGpuWatchdog as GcpIdleGpuWatchdog

        gcp_watchdog = GcpIdleGpuWatchdog(GCP_COMPONENT_NAME, gcp_watchdog_args(settings.watchdog))
        outputs["gcpIdleWatchdogFunction"] = gcp_watchdog.function_name
        outputs["gcpIdleWatchdogSchedule"] = gcp_watchdog.schedule_name
        if gcp_watchdog.topic_id is not None:
            outputs["gcpIdleWatchdogTopic"] = gcp_watchdog.topic_id
    return outputs
