"""Lambda entry point: read settings, make clients, run once, return the result (docs/reference.md)."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.config import Config

from .prices import load_prices
from .settings import Settings
from .watchdog import Clients, run

# Adaptive mode retries throttling with backoff and slows the client down when AWS pushes back.
CLIENT_CONFIG = Config(
    retries={"mode": "adaptive", "max_attempts": 10},
    connect_timeout=5,
    read_timeout=30,
    user_agent_extra="inference-infra-idle-gpu-watchdog",
)


def handler(event: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    settings = Settings.from_env(os.environ)
    if isinstance(event, dict) and event.get("dry_run") is True:
        settings = dataclasses.replace(settings, dry_run=True)  # an event may only make a run safer
    session = boto3.session.Session()
    clients = Clients(
        ec2=session.client("ec2", config=CLIENT_CONFIG),
        cloudwatch=session.client("cloudwatch", config=CLIENT_CONFIG),
        sns=session.client("sns", config=CLIENT_CONFIG) if settings.sns_topic_arn else None,
    )
    result = run(
        settings,
        clients,
        now=datetime.now(UTC),
        prices=load_prices(),
        function_name=getattr(context, "function_name", None) or "idle-gpu-watchdog",
        region=session.region_name,
    )
    return result.as_dict()
