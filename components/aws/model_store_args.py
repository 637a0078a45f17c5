"""ModelStore's arguments and their validation (pure: no provider SDK).

Apart from `model_store.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem

_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
# A role or user: aws:PrincipalArn of an assumed-role session is its role's ARN.
PUBLISHER_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[A-Za-z0-9+=,.@_/-]{1,512}$")


@dataclass(frozen=True, kw_only=True)
class GatewayEndpointArgs:
    """Where the S3 gateway endpoint goes: the fleets' VPC and their subnets' route tables."""

    vpc_id: pulumi.Input[str] = arg(doc="The fleets' VPC.", stack=False)
    route_table_ids: Sequence[pulumi.Input[str]] = arg(doc="The fleets' subnets' route tables.", stack=False)


@dataclass(frozen=True, kw_only=True)
class ModelStoreArgs:
    """The versioned, private S3 bucket the fleets read model weights from."""

    bucket_name: str | None = arg(
        None, "The bucket's name; default: a unique name derived from the component's."
    )
    noncurrent_version_days: int = arg(
        30,
        "Replaced weights' old versions are kept this many days (a bad upload can be rolled back).",
        ge=1,
        le=3650,
    )
    gateway_endpoint: GatewayEndpointArgs | None = arg(
        None, "An S3 gateway endpoint on these route tables: weight downloads skip the NAT.", stack=False
    )
    force_destroy: bool = arg(False, "Let `pulumi destroy` delete the bucket while it still holds weights.")
    access_logs: bool = arg(
        True, "Server access logs (who wrote or read which weight file) to a log bucket made alongside."
    )
    access_log_days: int = arg(365, "Days the access logs are kept.", ge=1, le=3650)
    publishers: Sequence[str] = arg(
        (),
        "IAM role or user ARNs that may write, replace or delete weights and manifests; the bucket policy "
        "denies object writes to every other principal (the deploying role too, unless listed). Empty: no "
        "write restriction beyond IAM (production stacks must name them).",
    )


def validate_model_store(args: ModelStoreArgs) -> list[Problem]:
    problems: list[Problem] = []
    name = args.bucket_name
    if name is not None and (not _BUCKET_RE.fullmatch(name) or ".." in name or name.startswith("xn--")):
        problems.append(
            Problem(
                "bucket_name", name, "must be 3-63 lower-case letters, digits, '.' or '-' (S3 naming rules)"
            )
        )
    for i, arn in enumerate(args.publishers):
        if not isinstance(arn, str) or not PUBLISHER_ARN.fullmatch(arn):
            problems.append(
                Problem(
                    f"publishers[{i}]",
                    arn,
                    "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>); an account root "
                    "or a wildcard would let anyone in it publish weights",
                )
            )
    if len(set(args.publishers)) != len(args.publishers):
        problems.append(Problem("publishers", list(args.publishers), "must not repeat an ARN"))
    if args.gateway_endpoint is not None and not args.gateway_endpoint.route_table_ids:
        problems.append(
            Problem("gateway_endpoint.route_table_ids", [], "must list the subnets' route tables")
        )
    return problems
