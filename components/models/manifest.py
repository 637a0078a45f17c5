"""The weight manifest: SHA-256 and size of every file of a model, stored beside the weights.

`inference-infra models manifest SOURCE` writes it (SOURCE: a local directory, `s3://bucket/prefix`
or `gs://bucket/prefix`); the node prefetch (components/aws/node/prefetch-model.sh, the GCP startup
script) checks every downloaded file against it before anything may serve the model, and refuses
pickle formats unless the fleet allows them. When every file matches it writes VERIFIED_MARKER in the
model directory; serving units start only when that file exists (`ExecStartPre=/usr/bin/test -f`).

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
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

MANIFEST_NAME = "inference-manifest.json"
VERIFIED_MARKER = ".inference-verified"  # written by the prefetch after every file matched
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl")  # formats that run code when loaded
_SKIPPED = {MANIFEST_NAME, VERIFIED_MARKER, ".prefetch-complete", ".prefetch.lock"}
_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative, POSIX separators
    size: int
    sha256: str


def is_pickle(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in PICKLE_SUFFIXES


def digest_stream(stream: BinaryIO) -> tuple[int, str]:
    sha, size = hashlib.sha256(), 0
    while chunk := stream.read(_CHUNK):
        sha.update(chunk)
        size += len(chunk)
    return size, sha.hexdigest()


def _skipped(relative: str) -> bool:
    return PurePosixPath(relative).name in _SKIPPED


def local_entries(root: Path) -> Iterator[FileEntry]:
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if _skipped(relative):
            continue
        with path.open("rb") as f:
            size, sha = digest_stream(f)
        yield FileEntry(relative, size, sha)


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
        if _skipped(relative):
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
        if not relative or relative.endswith("/") or _skipped(relative):
            continue
        with blob.open("rb") as f:
            size, sha = digest_stream(f)
        yield FileEntry(relative, size, sha)


def build(entries: Iterable[FileEntry]) -> dict[str, Any]:
    files = [
        {"path": e.path, "size": e.size, "sha256": e.sha256} for e in sorted(entries, key=lambda e: e.path)
    ]
    return {"version": 1, "algorithm": "sha256", "files": files}


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Failure:
    path: str
    reason: str  # missing | size | sha256 | pickle | unlisted

    def line(self) -> str:
        return f"weights verification failed: {self.path}: {self.reason}"


def verify(root: Path, manifest: dict[str, Any], *, allow_pickle: bool = False) -> list[Failure]:
    """Every file the manifest lists must be there with its size and SHA-256; files not listed and
    pickle files (unless allowed) fail too. An empty list means the directory may be served."""
    failures: list[Failure] = []
    listed = set()
    for item in manifest.get("files", []):
        relative = str(item["path"])
        listed.add(relative)
        if is_pickle(relative) and not allow_pickle:
            failures.append(Failure(relative, "pickle"))
            continue
        path = root / relative
        if ".." in PurePosixPath(relative).parts or os.path.isabs(relative):
            failures.append(Failure(relative, "path"))
            continue
        if not path.is_file():
            failures.append(Failure(relative, "missing"))
            continue
        with path.open("rb") as f:
            size, sha = digest_stream(f)
        if size != item["size"]:
            failures.append(Failure(relative, "size"))
        elif sha != item["sha256"]:
            failures.append(Failure(relative, "sha256"))
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative not in listed and not _skipped(relative):
            failures.append(Failure(relative, "unlisted"))
    return failures
