"""accelerator-imdsv2-required: accelerator instances on AWS require IMDSv2 session tokens.

Inference hosts run third-party model code and servers that fetch URLs; with
IMDSv1 one server-side request forgery hands out the instance role's
credentials. `metadataOptions.httpTokens = "required"` closes that. An instance
that takes its settings from a launch template and sets none itself is judged
on the template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import AWS_SAGEMAKER_ENDPOINT_CONFIG
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Outcome,
    Resource,
    not_applicable,
    passed,
    resource_policy,
    rule_metadata,
    show,
)
from inference_infra.policy.rules._machines import (
    AWS_LAUNCHERS,
    AWS_MACHINES,
    SAGEMAKER_HOSTED,
    accelerator_machine,
    launches_from_template,
    machine_label,
    untyped_template,
)

NAME = "accelerator-imdsv2-required"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "AWS accelerator instances, spot requests and launch templates require IMDSv2 "
    "(metadataOptions.httpTokens 'required')."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "maxHopLimit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 64,
            "default": 1,
            "description": "The largest metadataOptions.httpPutResponseHopLimit allowed: 1 keeps an IMDSv2 "
            "token on the host (a container behind a bridge is one hop further and gets none).",
        }
    }
)


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    use = accelerator_machine(resource, AWS_MACHINES)
    if use is None and not untyped_template(resource):
        return not_applicable(
            "applies to AWS instances, spot requests and launch templates with accelerators, "
            "and to launch templates that leave the instance type to the launch"
        )
    if resource.type == AWS_SAGEMAKER_ENDPOINT_CONFIG:
        return not_applicable(SAGEMAKER_HOSTED)
    options = resource.props.get("metadataOptions")
    if options is UNKNOWN:
        return Outcome(unknown=("metadataOptions",))
    if options is None and launches_from_template(resource):
        return passed()  # the template's metadata options apply; that template is checked itself
    if resource.type in AWS_LAUNCHERS:
        return Outcome(
            violations=(
                f"{resource.label} runs {machine_label(use)} without a launch template, so its instances get "
                "the AMI's or the account's metadata default (often IMDSv1 allowed); launch them from a "
                "template whose metadataOptions set httpTokens to 'required'.",
            )
        )
    options = options if isinstance(options, Mapping) else {}
    tokens, endpoint = options.get("httpTokens"), options.get("httpEndpoint")
    if tokens is UNKNOWN or endpoint is UNKNOWN:
        return Outcome(unknown=("metadataOptions.httpTokens",))
    if endpoint == "disabled":
        return passed()
    if tokens == "required":
        return _hop_limit(resource, use, options, config)
    state = (
        show(tokens) if tokens is not None else "unset (the AMI or account default decides, often 'optional')"
    )
    return Outcome(
        violations=(
            f"{resource.label} runs {machine_label(use)} with metadataOptions.httpTokens {state}; "
            "set httpTokens to 'required' (IMDSv2) so code on the host cannot read the instance role's "
            "credentials over IMDSv1.",
        )
    )


def _hop_limit(
    resource: Resource, use: Any, options: Mapping[str, Any], config: Mapping[str, Any]
) -> Outcome:
    """IMDSv2's token answer crosses at most httpPutResponseHopLimit hops: above 1, a container on a
    bridge network (the engines) gets a token and the instance role's credentials. Unset, EC2's default
    is 1 for a launch template left alone (the AMI may say 2: the library sets it explicitly)."""
    hops = options.get("httpPutResponseHopLimit")
    if hops is UNKNOWN:
        return Outcome(unknown=("metadataOptions.httpPutResponseHopLimit",))
    limit = config.get("maxHopLimit", 1)
    if isinstance(hops, int | float) and not isinstance(hops, bool) and hops > limit:
        return Outcome(
            violations=(
                f"{resource.label} runs {machine_label(use)} with metadataOptions.httpPutResponseHopLimit "
                f"{show(hops)}: a container one hop away (the engines behind Docker's bridge) gets an IMDSv2 "
                f"token and the instance role's credentials; set it to {limit} (config maxHopLimit).",
            )
        )
    return passed()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
