"""Cost tags on every taggable resource, applied by one stack transform.

`register_cost_tags` installs a Pulumi stack transform that writes the cost
tags onto each resource's own `tags` input (AWS) or `labels` input (GCP) as it
is registered, so a policy sees them at preview time and no component can
forget them. Tags a resource sets itself win over the stack's: a fleet may say
`AutoShutdown=false` for itself.

GCP labels are the same tags with lower-case hyphenated keys (`CostCenter` ->
`cost-center`) and values folded to GCP's label alphabet: lower case, and any
character other than a-z, 0-9, `_` and `-` becomes `_` (an owner
`ml-team@example.com` becomes `ml-team_example_com`), at most 63 characters.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.naming import is_gcp_label_key
from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_LAUNCH_TEMPLATE,
    GCP_GKE_NODE_POOL,
    GCP_INSTANCE_TEMPLATE,
    GCP_REGION_INSTANCE_TEMPLATE,
    accelerator_use,
    is_accelerator_instance,
)

COST_CENTER = "CostCenter"
ENVIRONMENT = "Environment"
OWNER = "Owner"
AUTO_SHUTDOWN = "AutoShutdown"
COST_TAG_KEYS = (COST_CENTER, ENVIRONMENT, OWNER)
# Production is recognised by name, by one function (`is_production`) that the components' hardening,
# the reference stack's production rules and every production policy call: an environment whose name
# starts with `prod` or `prd` (prod, production, production-eu, prd, prd-us) is production. Names the
# rule does not call production and that do not start with a common non-production word
# (`production_name_warning`) draw a warning, so `eu-prod` or `live` is not silently treated as dev.
PRODUCTION_PREFIXES = ("prod", "prd")
PRODUCTION_ENVIRONMENTS = ("prod", "production")  # the canonical names (policy defaults, docs)
NON_PRODUCTION_WORDS = frozenset(
    {
        "ci", "demo", "dev", "develop", "development", "experiment", "int", "integration", "lab", "local",
        "non", "nonprod", "perf", "pre", "preprod", "qa", "sandbox", "sbx", "scratch", "stage", "staging",
        "stg", "test", "testing", "uat",
    }
)  # fmt: skip

_AWS_RESERVED_PREFIX = "aws:"
_AWS_KEY_MAX, _AWS_VALUE_MAX = 128, 256
_GCP_LABEL_MAX = 63
# AWS: at most 50 user tags on a resource (Tagging AWS resources, "Tag naming limits and
# requirements"); GCP: at most 64 labels (Labels overview, "Requirements for labels"), read 2026-11-25.
_AWS_TAGS_MAX = 50
# The tag characters every AWS service accepts: letters, digits and spaces, and + - = . _ : / @ ("Tag
# naming limits and requirements" in Tagging AWS resources; IAM's TagRole takes values of
# [\p{L}\p{Z}\p{N}_.:/=+\-@]*, IAM API Reference, Tag data type; read 2026-12-02). EC2 takes more, but
# the same tags go on IAM roles, Lambda functions and load balancers, and the idle watchdog's own
# settings reader (lambdas/idle_gpu_watchdog/settings.py: TAG_TEXT, the same class of characters)
# refuses any other in its scope tags, which default to the Environment cost tag.
AWS_TAG_TEXT = re.compile(r"[\w .:/=+\-@]*")
AWS_TAG_CHARACTERS = "letters, digits, spaces and + - = . _ : / @"


@dataclass(frozen=True, kw_only=True)
class CostTags:
    """The tags every resource of a stack carries."""

    cost_center: str
    environment: str
    owner: str
    auto_shutdown: bool  # AutoShutdown on accelerator instances that do not set it themselves
    extra: Mapping[str, str] = field(default_factory=dict)

    def aws_tags(self) -> dict[str, str]:
        return {COST_CENTER: self.cost_center, ENVIRONMENT: self.environment, OWNER: self.owner, **self.extra}

    def gcp_labels(self) -> dict[str, str]:
        return {gcp_label_key(k): gcp_label_value(v) for k, v in self.aws_tags().items()}


def validate_cost_tags(tags: CostTags) -> list[Problem]:
    """Every problem with the tags, against AWS tag and GCP label rules."""
    problems = []
    if (count := len(tags.aws_tags())) > _AWS_TAGS_MAX:
        problems.append(
            Problem(
                "tags",
                count,
                f"tags in all (with the cost tags) are too many: AWS allows {_AWS_TAGS_MAX} on a resource",
            )
        )
    for key, value in tags.aws_tags().items():
        where = f"tag {key}"
        if not value.strip():
            problems.append(Problem(where, value, "must not be empty"))
        if len(key) > _AWS_KEY_MAX or len(value) > _AWS_VALUE_MAX:
            problems.append(
                Problem(where, value, f"is too long (keys <= {_AWS_KEY_MAX}, values <= {_AWS_VALUE_MAX})")
            )
        problems += _tag_text_problems(f"tag key {key!r}", f"tag {key}", key, value)
        if not is_gcp_label_key(gcp_label_key(key)):
            problems.append(Problem(f"tag key {key!r}", key, "does not map to a valid GCP label key"))
    return problems


def aws_tag_problems(input_name: str, tags: object, *, selector: bool = False) -> list[Problem]:
    """A component's own AWS `tags`: at most 50, keys of 1-128 and values of at most 256 of the
    characters every AWS service accepts, no key starting with 'aws:' (AWS reserves the prefix).
    `selector=True`: tags that select existing resources, which may read AWS's own 'aws:' tags."""
    if not isinstance(tags, Mapping):
        return []  # the type check names it
    problems = []
    if len(tags) > _AWS_TAGS_MAX:
        problems.append(
            Problem(input_name, len(tags), f"are too many: AWS allows {_AWS_TAGS_MAX} on a resource")
        )
    for key, value in tags.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue  # the type check names it
        if not key or len(key) > _AWS_KEY_MAX or len(value) > _AWS_VALUE_MAX:
            problems.append(
                Problem(
                    f"{input_name}[{key!r}]",
                    value,
                    f"is out of AWS's limits (keys 1-{_AWS_KEY_MAX} characters, values <= {_AWS_VALUE_MAX})",
                )
            )
        problems += _tag_text_problems(
            f"{input_name} key", f"{input_name}[{key!r}]", key, value, reserved_ok=selector
        )
    return problems


def _tag_text_problems(
    key_input: str, value_input: str, key: str, value: str, *, reserved_ok: bool = False
) -> list[Problem]:
    problems = []
    if not AWS_TAG_TEXT.fullmatch(key):
        problems.append(Problem(key_input, key, f"must use only {AWS_TAG_CHARACTERS}"))
    elif key.lower().startswith(_AWS_RESERVED_PREFIX) and not reserved_ok:
        problems.append(Problem(key_input, key, "uses the reserved prefix 'aws:'"))
    if not AWS_TAG_TEXT.fullmatch(value):
        problems.append(
            Problem(value_input, value, f"must use only {AWS_TAG_CHARACTERS} (AWS's tag characters)")
        )
    return problems


def gcp_label_key(tag_key: str) -> str:
    """'CostCenter' -> 'cost-center', 'AutoShutdown' -> 'auto-shutdown'."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", tag_key)
    return re.sub(r"[^a-z0-9_-]", "-", spaced.lower())[:_GCP_LABEL_MAX]


def gcp_label_value(value: str) -> str:
    """A tag value folded into GCP's label alphabet (see the module docstring)."""
    return re.sub(r"[^a-z0-9_-]", "_", value.lower())[:_GCP_LABEL_MAX]


def bool_tag(value: bool) -> str:
    return "true" if value else "false"


def tagged_props(type_token: str, props: Mapping[str, Any], tags: CostTags) -> dict[str, Any] | None:
    """props with the cost tags merged in, or None when the resource takes no tags.

    Pure: the transform below and the tests both use it.
    """
    if type_token == GCP_GKE_NODE_POOL:
        return _node_pool_labels(props, tags)
    field_name = tag_field(type_token)
    if field_name is None:
        return None
    current = props.get(field_name)
    if (current is not None and not isinstance(current, (Mapping, list))) or _is_secret(current):
        return None  # not known yet (preview) or secret: nothing to merge into
    out = dict(props)
    accelerated = is_accelerator_instance(type_token, props) or _accelerator_template(type_token, props)
    if field_name in ("labels", "resourceLabels"):
        wanted = tags.gcp_labels()
        if accelerated:
            wanted[gcp_label_key(AUTO_SHUTDOWN)] = bool_tag(tags.auto_shutdown)
        out[field_name] = {**wanted, **_mapping(props.get(field_name))}
        return out
    wanted = tags.aws_tags()
    if accelerated:
        wanted[AUTO_SHUTDOWN] = bool_tag(tags.auto_shutdown)
    if type_token == AWS_AUTOSCALING_GROUP:
        out["tags"] = _asg_tags(props.get("tags"), wanted)
        return out
    merged = {**wanted, **_mapping(props.get("tags"))}
    out["tags"] = merged
    if type_token == AWS_LAUNCH_TEMPLATE:
        out["tagSpecifications"] = _launch_template_tag_specs(props, merged, tags)
    return out


def _node_pool_labels(props: Mapping[str, Any], tags: CostTags) -> dict[str, Any] | None:
    """A GKE node pool has no labels of its own: its nodes' GCE labels are nodeConfig.resourceLabels
    (the label the required-cost-tags policy reads), with auto-shutdown on accelerator pools."""
    config = props.get("nodeConfig")
    if config is not None and not isinstance(config, Mapping):
        return None  # not known yet (preview): nothing to merge into
    config = dict(config or {})
    current = config.get("resourceLabels")
    if (current is not None and not isinstance(current, Mapping)) or _is_secret(current):
        return None
    wanted = tags.gcp_labels()
    if accelerator_use(GCP_GKE_NODE_POOL, props) is not None:
        wanted[gcp_label_key(AUTO_SHUTDOWN)] = bool_tag(tags.auto_shutdown)
    config["resourceLabels"] = {**wanted, **_mapping(current)}
    return {**props, "nodeConfig": config}


def _is_secret(value: Any) -> bool:
    from pulumi.runtime.rpc import is_rpc_secret

    return is_rpc_secret(value)


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _asg_tags(existing: Any, wanted: Mapping[str, str]) -> list[dict[str, Any]]:
    items = [dict(t) for t in existing] if isinstance(existing, list) else []
    have = {t.get("key") for t in items}
    items.extend(
        {"key": k, "value": v, "propagateAtLaunch": True} for k, v in wanted.items() if k not in have
    )
    return items


def _launch_template_tag_specs(props: Mapping[str, Any], merged: Mapping[str, str], tags: CostTags) -> list:
    """Instances and volumes launched from a template carry the tags too."""
    specs = [dict(s) for s in props.get("tagSpecifications") or [] if isinstance(s, Mapping)]
    instance_tags = dict(merged)
    if "instanceType" in props:  # a template that launches accelerators: AutoShutdown on its instances
        instance_tags.setdefault(AUTO_SHUTDOWN, bool_tag(tags.auto_shutdown))
    for kind, wanted in (("instance", instance_tags), ("volume", tags.aws_tags())):
        spec = next((s for s in specs if s.get("resourceType") == kind), None)
        if spec is None:
            specs.append({"resourceType": kind, "tags": dict(wanted)})
        else:
            spec["tags"] = {**wanted, **_mapping(spec.get("tags"))}
    return specs


@cache
def tag_field(type_token: str) -> str | None:
    """'tags' or 'labels' when the resource type takes a map of them, else None.

    Read from the provider SDK's own class for the type (its constructor
    arguments), so no hand-kept list can fall behind the providers.
    """
    if type_token == AWS_AUTOSCALING_GROUP:
        return "tags"
    if type_token == "gcp:container/cluster:Cluster":  # GKE names its GCE labels resourceLabels
        return "resourceLabels"
    package = type_token.split(":", 1)[0]
    wanted = {"aws": "tags", "gcp": "labels"}.get(package)
    if wanted is None:
        return None
    cls = _resource_class(type_token)
    if cls is None:
        return None
    param = inspect.signature(cls._internal_init).parameters.get(wanted)
    if param is None:
        return None
    return wanted if "Mapping" in str(param.annotation) else None


def _resource_class(type_token: str) -> type | None:
    import importlib

    from pulumi.runtime import rpc

    try:
        package, module, _ = type_token.split(":")
    except ValueError:
        return None
    importlib.import_module(f"pulumi_{package}")  # registers the package's type tokens
    for registered in rpc._RESOURCE_MODULES.get(f"{package}:{module}", []):
        info = getattr(registered, "mod_info", None)
        if info and type_token in info.get("classes", {}):
            return getattr(importlib.import_module(info["fqn"]), info["classes"][type_token], None)
    return None


def _accelerator_template(type_token: str, props: Mapping[str, Any]) -> bool:
    """A GCP instance template of accelerator VMs: its labels are its VMs' labels, so it carries the
    auto-shutdown label the VMs need (GCE scrape discovery keeps VMs by it, as the watchdog's opt-in),
    like an AWS launch template's instance tag specification."""
    return type_token in (GCP_INSTANCE_TEMPLATE, GCP_REGION_INSTANCE_TEMPLATE) and (
        accelerator_use(type_token, props) is not None
    )


def cost_tag_transform(tags: CostTags):
    """A Pulumi resource transform that applies `tagged_props` to every resource."""
    import pulumi

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if not args.custom:
            return None
        props = tagged_props(args.type_, args.props, tags)
        return None if props is None else pulumi.ResourceTransformResult(props=props, opts=args.opts)

    return transform


# The tags registered for the running program, with the engine connection (monitor) they were
# registered on, so that a later program in the same process (a test) does not read them.
_REGISTERED: tuple[Any, CostTags] | None = None


def register_cost_tags(tags: CostTags) -> None:
    """Tag every resource registered from here on (call it first in a stack program)."""
    import pulumi

    global _REGISTERED
    raise_if_invalid("cost tags", validate_cost_tags(tags))
    pulumi.runtime.register_resource_transform(cost_tag_transform(tags))
    _REGISTERED = (_monitor(), tags)


def registered_cost_tags() -> CostTags | None:
    """The cost tags `register_cost_tags` installed for the running program, or None."""
    if _REGISTERED is None or _REGISTERED[0] is not _monitor():
        return None
    return _REGISTERED[1]


def is_production(environment: object) -> bool:
    """Whether an environment name is production: it starts with `prod` or `prd` (case and surrounding
    blanks ignored). `preprod`, `non-prod` and `eu-prod` are not (the last draws a warning)."""
    return isinstance(environment, str) and environment.strip().lower().startswith(PRODUCTION_PREFIXES)


def production_name_warning(environment: str) -> str | None:
    """A warning for a name the rule does not call production and that does not start with a common
    non-production word (dev, test, staging, qa, preprod, ...): `eu-prod`, `live`, `main`."""
    if is_production(environment):
        return None
    first = re.split(r"[^a-z0-9]+", environment.strip().lower())[0]
    if first in NON_PRODUCTION_WORDS or first.startswith(("dev", "test", "stag", "sandbox")):
        return None
    return (
        f"environment {environment!r} is not production: production is a name starting with 'prod' or "
        "'prd' (prod, production-eu, prd); the production hardening, flow logs, TLS and the production "
        "policies do not apply to this stack. Rename it (e.g. prod-eu) if it is production"
    )


def in_production() -> bool:
    """Whether the registered cost tags say the environment is production (`is_production`); the
    components' production hardening (deletion protection, log retention, flow logs) defaults to it."""
    tags = registered_cost_tags()
    return tags is not None and is_production(tags.environment)


def _monitor() -> Any:
    from pulumi.runtime import settings

    return settings.SETTINGS.monitor
