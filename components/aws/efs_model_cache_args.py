"""EfsModelCache's arguments and their validation (pure: no provider SDK).

Apart from `efs_model_cache.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import pulumi

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.aws.network_args import SubnetRef, validate_zone
from inference_infra.components.errors import Problem

_IAM_PRINCIPAL = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")


IA_TRANSITIONS = (1, 7, 14, 30, 60, 90, 180, 270, 365)  # days EFS accepts for AFTER_<n>_DAYS


class ThroughputMode(StrEnum):
    ELASTIC = "elastic"
    BURSTING = "bursting"


@renamed_inputs(Renamed("kms_key_id", "kms_key"))
@dataclass(frozen=True, kw_only=True)
class EfsModelCacheArgs:
    """A shared, encrypted EFS file system of model weights that fleets mount read-only."""

    vpc_id: pulumi.Input[str] = arg(doc="The VPC of the mount targets and security groups.", stack=False)
    subnets: Sequence[SubnetRef] = arg(doc="One subnet per zone: a mount target in each.", stack=False)
    client_security_group_ids: Sequence[pulumi.Input[str]] = arg(
        (), "More security groups whose members may mount the cache, besides its own client group."
    )
    throughput_mode: ThroughputMode = arg(
        ThroughputMode.ELASTIC,
        "elastic: pay per byte moved, bursts to GiB/s when a fleet starts; bursting: throughput grows with "
        "the bytes stored.",
    )
    transition_to_ia_days: int | None = arg(
        30,
        f"Files untouched this many days move to Infrequent Access ({', '.join(map(str, IA_TRANSITIONS))}); "
        "null keeps every file in Standard.",
    )
    backup: bool = arg(
        False, "AWS Backup of the cache (off: the S3 model store is the weights' source of truth)."
    )
    weights_path: str = arg("/models", "The access points' root directory (absolute, not '/').")
    posix_uid: int = arg(1000, "The POSIX user id every client acts as (not root).", ge=1, le=4294967294)
    posix_gid: int = arg(1000, "The POSIX group id every client acts as (not root).", ge=1, le=4294967294)
    kms_key: pulumi.Input[str] | None = arg(
        None, "Customer KMS key for the file system; default: the account's aws/elasticfilesystem key."
    )
    writer_principal_arns: Sequence[pulumi.Input[str]] = arg(
        (),
        "IAM roles or users that may write the cache (a publisher), through the writer access point; "
        "serving fleets always mount it read-only; with none, nobody writes through IAM-authorized "
        "mounts.",
    )


def validate_efs_cache(args: EfsModelCacheArgs) -> list[Problem]:
    problems: list[Problem] = []
    zones = [s.availability_zone for s in args.subnets]
    if not args.subnets:
        problems.append(Problem("subnets", [], "must list at least one subnet (one per zone)"))
    for i, zone in enumerate(zones):
        problems += validate_zone(f"subnets[{i}].availability_zone", zone)
    if len(set(zones)) != len(zones):
        problems.append(
            Problem("subnets", zones, "must be in different zones (EFS allows one mount target per zone)")
        )
    if args.transition_to_ia_days is not None and args.transition_to_ia_days not in IA_TRANSITIONS:
        allowed = ", ".join(map(str, IA_TRANSITIONS))
        problems.append(
            Problem("transition_to_ia_days", args.transition_to_ia_days, f"must be one of {allowed}")
        )
    if not args.weights_path.startswith("/") or args.weights_path == "/":
        problems.append(
            Problem("weights_path", args.weights_path, "must be an absolute directory other than '/'")
        )
    for i, arn in enumerate(args.writer_principal_arns):
        if isinstance(arn, str) and not _IAM_PRINCIPAL.fullmatch(arn):
            problems.append(
                Problem(
                    f"writer_principal_arns[{i}]",
                    arn,
                    "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>); no wildcards",
                )
            )
    return problems
