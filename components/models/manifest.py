"""The weight manifest: SHA-256 and size of every file of a model, stored beside the weights.

`inference-infra models manifest SOURCE` builds it (SOURCE: a local directory, `s3://bucket/prefix`
or `gs://bucket/prefix`) and prints the manifest's own SHA-256, the digest a fleet pins
(`S3Weights.manifest_sha256` on AWS). The nodes check the downloaded files with the one verifier,
components/models/verify_weights.py (also `inference-infra models verify DIR`): the manifest must
have the pinned digest, every file must match it and be of an allowed format. Only then is
VERIFIED_MARKER written, holding the digest; engines start only when it is there.

Manifest shape (JSON, keys sorted, one file per model directory, named MANIFEST_NAME):

    {"version": 1, "algorithm": "sha256",
     "files": [{"path": "config.json", "size": 655, "sha256": "<64 hex>"}, ...]}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from inference_infra.components.models.verify_weights import (
    COMPILED_FOLDER,
    MANIFEST_NAME,
    SKIPPED,
    VERIFIED_MARKER,
    check_key,
    format_problem,
    is_sha256,
)


def is_pinned_digest(text: object) -> bool:
    """A manifest pin as the fleets take it: 64 lower-case hex digits, as `models manifest` prints them.

    The one SHA-256 check of the fleets' inputs (the node's verifier, verify_weights.py, holds the pattern).
    """
    return isinstance(text, str) and is_sha256(text) and text == text.lower()


__all__ = [
    "MANIFEST_NAME",
    "SKIPPED",
    "VERIFIED_MARKER",
    "VERIFIER_FILE",
    "FileEntry",
    "build",
    "check_key",
    "digest",
    "dumps",
    "entries_problems",
    "format_problem",
    "gcs_entries",
    "is_pinned_digest",
    "local_entries",
    "s3_entries",
    "split_uri",
    "verifier_source",
]

_CHUNK = 8 * 1024 * 1024
VERIFIER_FILE = "verify_weights.py"  # the node copy's file name


def verifier_source() -> str:
    """The verifier's source, exactly as a node runs it (AWS user data, the GCP startup script)."""
    return resources.files("inference_infra.components.models").joinpath(VERIFIER_FILE).read_text()


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative, POSIX separators
    size: int
    sha256: str


def digest_stream(stream: BinaryIO) -> tuple[int, str]:
    sha, size = hashlib.sha256(), 0
    while chunk := stream.read(_CHUNK):
        sha.update(chunk)
        size += len(chunk)
    return size, sha.hexdigest()


def links_outside(root: Path) -> list[str]:
    """Symbolic links under `root` (files or folders, at any depth) whose target is not inside `root`,
    or that point nowhere, as `relative -> target`. A manifest of such a folder would hash (and an upload
    would send) files from elsewhere on the machine: a link to ~/.aws/credentials or /etc is read as if
    it were a weight file. Links inside the folder are kept (they are hashed as the file they name).
    The walk does not follow folder links, so a loop of links cannot trap it."""
    base = root.resolve()
    found = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(folder, name)
            if not path.is_symlink():
                continue
            target = path.resolve()  # strict=False: a dangling link resolves to where it points
            if not target.exists() or not target.is_relative_to(base):
                found.append(f"{path.relative_to(root).as_posix()} -> {os.readlink(path)}")
    return sorted(found)


def local_entries(root: Path) -> Iterator[FileEntry]:
    """Every file under `root`; refuses (ValueError) a folder with a link out of it (`links_outside`)."""
    outside = links_outside(root)
    if outside:
        raise ValueError(f"links out of the folder: {'; '.join(outside)}")
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if skipped(relative):
            continue
        with path.open("rb") as f:
            size, sha = digest_stream(f)
        yield FileEntry(relative, size, sha)


def skipped(relative: str) -> bool:
    """Not a weight file: the bookkeeping files and the Neuron compiled artifacts kept beside the weights
    (neuron-compiled/, indexed by the manifest itself: components/models/compiled.py)."""
    return relative in SKIPPED or relative.startswith(COMPILED_FOLDER + "/")


def split_uri(uri: str) -> tuple[str, str]:
    """'s3://bucket/a/b/' -> ('bucket', 'a/b/'): the prefix always ends with '/' unless empty."""
    rest = uri.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


def s3_entries(uri: str, client: Any = None) -> Iterator[FileEntry]:
    if client is None:
        import boto3

        client = boto3.client("s3")
    bucket, prefix = split_uri(uri)
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    keys = sorted(o["Key"] for page in pages for o in page.get("Contents", []) if not o["Key"].endswith("/"))
    for key in keys:
        relative = key[len(prefix) :]
        if skipped(relative):
            continue
        body = client.get_object(Bucket=bucket, Key=key)["Body"]
        size, sha = digest_stream(body)
        yield FileEntry(relative, size, sha)


def gcs_entries(uri: str, client: Any = None) -> Iterator[FileEntry]:
    if client is None:
        try:
            from google.cloud import storage
        except ModuleNotFoundError as e:
            raise RuntimeError(
                "gs:// sources need the google-cloud-storage package (pip install google-cloud-storage)"
            ) from e
        client = storage.Client()
    bucket, prefix = split_uri(uri)
    blobs = sorted(client.list_blobs(bucket, prefix=prefix), key=lambda b: b.name)
    for blob in blobs:
        relative = blob.name[len(prefix) :]
        if not relative or relative.endswith("/") or skipped(relative):
            continue
        with blob.open("rb") as f:
            size, sha = digest_stream(f)
        yield FileEntry(relative, size, sha)


def entries_problems(entries: Iterable[FileEntry], allow_code: bool = False) -> list[str]:
    """Files a node would refuse: unsafe paths (check_key) and formats outside the allow-list."""
    problems = []
    for e in entries:
        why = check_key(e.path) or format_problem(e.path, allow_code)
        if why is not None:
            problems.append(f"{e.path} {why}")
    return problems


def build(entries: Iterable[FileEntry]) -> dict[str, Any]:
    files = [
        {"path": e.path, "size": e.size, "sha256": e.sha256} for e in sorted(entries, key=lambda e: e.path)
    ]
    return {"version": 1, "algorithm": "sha256", "files": files}


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def digest(text: str | bytes) -> str:
    """The SHA-256 of a manifest's bytes, as written: the digest a fleet pins."""
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()
