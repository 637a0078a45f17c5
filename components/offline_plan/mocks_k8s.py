"""pulumi-kubernetes' data sources that run in the program's process.

- `kubernetes:helm:template` (Helm v3 `Chart`): helm cannot run offline (no helm, no chart
  repository), so the chart renders no objects; the plan keeps the chart's options to say so.
- `kubernetes:kustomize:directory` (kustomize v1 `Directory`): kustomize does not run offline
  either (a directory may be a Git URL); no objects, and the plan says so.
- `kubernetes:yaml:decode` (yaml v1 `ConfigFile`/`ConfigGroup`): the manifest text is parsed here,
  as the provider would, so the objects are registered, planned and checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inference_infra.components.offline_plan.mocks import MockContext

HELM_TEMPLATE = "kubernetes:helm:template"
KUSTOMIZE = "kubernetes:kustomize:directory"


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


def _decode(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    import yaml

    from inference_infra.components import bounded_yaml

    text = args.get("text")
    try:
        objects = list(bounded_yaml.load_all(text)) if isinstance(text, str) else []
    except yaml.YAMLError:
        objects = []  # the provider reports bad YAML at deploy time
    return {"result": [o for o in objects if isinstance(o, Mapping)]}


INVOKE_HOOKS = {HELM_TEMPLATE: _template, KUSTOMIZE: _template, "kubernetes:yaml:decode": _decode}
