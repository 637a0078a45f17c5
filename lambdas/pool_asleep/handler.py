"""Lambda entry point: read the working hours from the environment, answer 503 + Retry-After."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from .respond import Hours, response


def handler(event: dict[str, Any], context: Any) -> dict[str, object]:
    return response(datetime.now(UTC), Hours.from_env(os.environ))
