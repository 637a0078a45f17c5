"""GCP naming rules shared by the GCP components (pure, no Pulumi).

Compute Engine names, zones, regions, labels and Cloud Storage URIs are
checked here so that every component rejects a bad one with the same words,
before any resource is registered. The zone, region and label patterns are
the domain's (`components.naming`), which the monitoring settings and cost
tags check too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from inference_infra.components.catalog.zones import gcp_zone_problems
from inference_infra.components.errors import Problem
from inference_infra.components.naming import is_gcp_label_key as is_label_key
from inference_infra.components.naming import is_gcp_label_value as is_label_value
from inference_infra.components.naming import is_gcp_region as is_region
from inference_infra.components.naming import is_gcp_zone as is_zone

_NAME_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
_GS_URI_RE = re.compile(r"^gs://([^/]+)/(.+)$")
# A model folder's path inside its bucket: segments of letters, digits, '.', '_' and '-', each starting
# with a letter or digit (so no '.' or '..' segment and nothing that reads as an option), joined by '/'.
# The path becomes an IAM condition's prefix, a directory on the node and a unit's path: nothing else
# may pass (a '*' would be a wildcard, a space or quote a word boundary).
_FOLDER_SEGMENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
FOLDER_RULE = (
    "must be 'gs://<bucket>/<folder>', the folder a path of segments made of letters, digits, '.', '_' "
    "and '-' (each starting with a letter or digit) joined by '/'; no '*', spaces, quotes, '$', '%', '..' "
    "or control characters: the folder becomes the nodes' read grant, a directory on the node and part of "
    "its units"
)

# Children append suffixes such as "-reservation" to a component's name; keep room for them
# within Compute Engine's 63-character limit.
MAX_COMPONENT_NAME = 40


def name_problems(input_name: str, value: str, *, max_length: int = MAX_COMPONENT_NAME) -> list[Problem]:
    if not _NAME_RE.fullmatch(value) or len(value) > max_length:
        return [
            Problem(
                input_name,
                value,
                f"must be a Compute Engine name: lower-case letters, digits and '-', starting with a "
                f"letter, not ending with '-', at most {max_length} characters",
            )
        ]
    return []


def region_of(zone: str) -> str:
    """'us-central1-a' -> 'us-central1'."""
    return zone.rsplit("-", 1)[0]


def zone_problems(input_name: str, value: str) -> list[Problem]:
    """A zone's form, then its region and name against the catalog's lists (unknown region, a zone
    its region does not have), each with a did-you-mean."""
    if not is_zone(value):
        return [Problem(input_name, value, "must be a zone such as 'us-central1-a'")]
    return gcp_zone_problems(input_name, value)


def label_problems(input_name: str, labels: Mapping[str, str]) -> list[Problem]:
    problems = []
    for key, value in labels.items():
        if not is_label_key(key):
            problems.append(
                Problem(
                    f"{input_name} key",
                    key,
                    "must be a GCP label key: lower-case letters, digits, '_' and '-', starting with a "
                    "letter, at most 63 characters",
                )
            )
        if not isinstance(value, str) or not is_label_value(value):
            problems.append(
                Problem(
                    f"{input_name}[{key!r}]",
                    value,
                    "must be a GCP label value: lower-case letters, digits, '_' and '-', "
                    "at most 63 characters",
                )
            )
    return problems


def bucket_problems(input_name: str, bucket: str) -> list[Problem]:
    if bucket.startswith("gs://") or not _BUCKET_RE.fullmatch(bucket):
        return [Problem(input_name, bucket, "must be a Cloud Storage bucket name (without 'gs://')")]
    return []


def folder_of(uri: str) -> str:
    """gs://bucket/a/b/ -> 'a/b' (the folder's path inside its bucket)."""
    match = _GS_URI_RE.fullmatch(uri)
    return match.group(2).strip("/") if match else ""


def folder_name(uri: str) -> str:
    """gs://bucket/a/b/ -> 'b': the model's directory name on the node."""
    return uri.rstrip("/").rsplit("/", 1)[-1]


def is_model_folder_uri(uri: str) -> bool:
    """gs://<bucket>/<segment>[/<segment>...][/] with every segment on the allow-list."""
    match = _GS_URI_RE.fullmatch(uri) if isinstance(uri, str) else None
    if match is None or not _BUCKET_RE.fullmatch(match.group(1)):
        return False
    path = match.group(2).removesuffix("/")
    return bool(path) and all(_FOLDER_SEGMENT_RE.fullmatch(segment) for segment in path.split("/"))


def model_uri_problems(input_name: str, uris: tuple[str, ...], bucket: str | None) -> list[Problem]:
    """Every URI must be an allow-listed gs://<bucket>/<folder> inside the bucket the nodes may read."""
    problems = []
    for i, uri in enumerate(uris):
        where = f"{input_name}[{i}]"
        match = _GS_URI_RE.fullmatch(uri) if isinstance(uri, str) else None
        if match is not None and not _BUCKET_RE.fullmatch(match.group(1)):
            problems.append(Problem(where, uri, "must name a Cloud Storage bucket: gs://<bucket>/<folder>"))
        elif not is_model_folder_uri(uri):
            problems.append(Problem(where, uri, FOLDER_RULE))
        elif bucket is None:
            problems.append(
                Problem(where, uri, "needs the model bucket set: the nodes may read only that bucket")
            )
        elif match is not None and match.group(1) != bucket:
            problems.append(
                Problem(
                    where, uri, f"is outside the model bucket {bucket!r}, which is all the nodes may read"
                )
            )
    names = [folder_name(uri) for uri in uris if isinstance(uri, str)]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(
            Problem(
                input_name, list(uris), f"name the folder {duplicate!r} twice; each model needs its own name"
            )
        )
    return problems


__all__ = [
    "MAX_COMPONENT_NAME",
    "bucket_problems",
    "is_label_key",
    "is_label_value",
    "is_region",
    "is_zone",
    "label_problems",
    "model_uri_problems",
    "name_problems",
    "region_of",
    "zone_problems",
]
