"""Lambda entry point: parse the EventBridge event, drain, log one JSON line, return the result."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import boto3
from botocore.config import Config

from .drain import DrainError, run
from .events import parse_event
from .settings import Settings

# Two minutes is all an interruption leaves: short timeouts, a few fast retries.
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=3,
    read_timeout=10,
    user_agent_extra="inference-infra-spot-drain",
)


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    settings = Settings.from_env(os.environ)
    notice = parse_event(event)
    session = boto3.session.Session()
    result = run(
        notice,
        settings,
        autoscaling=session.client("autoscaling", config=CLIENT_CONFIG),
        elbv2=session.client("elbv2", config=CLIENT_CONFIG),
        ec2=session.client("ec2", config=CLIENT_CONFIG),
    )
    out = result.as_dict()
    sys.stdout.write(json.dumps({"event": "spot_drain", "event_id": notice.event_id, **out}) + "\n")
    if result.failed:
        raise DrainError(f"spot drain of {notice.instance_id} failed: {'; '.join(result.failed)}")
    return out
