"""Helm v3 `Chart` offline: `helm template` cannot run (no helm, no chart repository), so the
chart renders no objects; the plan keeps the chart's options to say so and to read its values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inference_infra.components.offline_plan.mocks import MockContext

HELM_TEMPLATE = "kubernetes:helm:template"


def helm_template_options(args: Mapping[str, Any]) -> dict[str, Any]:
    """The chart options a v3 Chart sends to `kubernetes:helm:template` (its `jsonOpts`)."""
    raw = args.get("jsonOpts")
    try:
        opts = json.loads(raw) if isinstance(raw, str) else dict(raw or {})
    except ValueError:
        opts = {}
    return opts if isinstance(opts, dict) else {}


def _template(_: Mapping[str, Any], __: MockContext) -> dict[str, Any]:
    return {"result": []}


INVOKE_HOOKS = {HELM_TEMPLATE: _template}
