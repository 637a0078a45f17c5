"""A Kubernetes pool's weight fetch: the pinned manifest, then exactly the files it lists (runs in a pod).

The init container runs this file as it is, beside the shared verifier (`verify_weights.py`, the
file the VM nodes run) in the same ConfigMap folder, with the engine image's python3:

    python3 pool_fetch_weights.py --source s3://BUCKET/PREFIX --dest DIR --expect-sha256 HEX
    python3 pool_fetch_weights.py --source gs://BUCKET/FOLDER --dest DIR --expect-sha256 HEX

1. it downloads `inference-manifest.json` and stops unless its SHA-256 is the pinned one (so a
   manifest rewritten by whoever can write the bucket fetches nothing);
2. it downloads every file the manifest lists, each path checked by the verifier's `check_key` (no
   `..`, no absolute path), and nothing else; the next init container verifies them.

Credentials are the pod's workload identity, never a key in the pod: on EKS boto3 reads IRSA's
projected token (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE, which EKS's pod identity webhook sets);
on GKE the metadata server answers the token of the Google service account bound to the pod's
Kubernetes service account (Workload Identity) and the file is read with Cloud Storage's JSON API.

Exit 0 fetched, 1 not (one line on stderr), 2 usage. The standard library, and boto3 for S3 (the
vLLM image installs it: vllm-project/vllm docker/Dockerfile, stage vllm-openai-base).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import urllib.parse
import urllib.request

MANIFEST_NAME = "inference-manifest.json"
GCE_TOKEN_URL = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
GCS_MEDIA_URL = "https://storage.googleapis.com/storage/v1/b/{bucket}/o/{name}?alt=media"
CHUNK = 8 * 1024 * 1024
TIMEOUT_SECONDS = 60


def split_source(source: str) -> tuple[str, str, str]:
    """('s3' or 'gs', bucket, prefix without slashes at either end)."""
    scheme, _, rest = source.partition("://")
    if scheme not in ("s3", "gs") or not rest:
        raise ValueError(f"--source {source!r} is not s3://BUCKET/PREFIX or gs://BUCKET/FOLDER")
    bucket, _, prefix = rest.partition("/")
    return scheme, bucket, prefix.strip("/")


def _object(prefix: str, path: str) -> str:
    return f"{prefix}/{path}" if prefix else path


class S3Reader:
    def __init__(self, bucket: str) -> None:
        import boto3  # the vLLM image's; IRSA's environment gives it the pool's role

        self.bucket = bucket
        self.client = boto3.client("s3")

    def download(self, key: str, dest: str) -> None:
        self.client.download_file(self.bucket, key, dest)


class GcsReader:
    def __init__(self, bucket: str) -> None:
        self.bucket = bucket
        self._token: str | None = None

    def token(self) -> str:
        if self._token is None:
            request = urllib.request.Request(GCE_TOKEN_URL, headers={"Metadata-Flavor": "Google"})
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                self._token = json.loads(response.read())["access_token"]
        return self._token

    def download(self, name: str, dest: str) -> None:
        url = GCS_MEDIA_URL.format(
            bucket=urllib.parse.quote(self.bucket, safe=""), name=urllib.parse.quote(name, safe="")
        )
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.token()}"})
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response, open(dest, "wb") as out:
            while chunk := response.read(CHUNK):
                out.write(chunk)


def fetch(reader: S3Reader | GcsReader, prefix: str, dest: str, expect_sha256: str) -> list[str]:
    """Download the pinned manifest and its files into dest; the problems (empty: fetched)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from verify_weights import check_key, listed_paths  # the shared verifier, beside this file

    os.makedirs(dest, exist_ok=True)
    manifest = os.path.join(dest, MANIFEST_NAME)
    reader.download(_object(prefix, MANIFEST_NAME), manifest)
    with open(manifest, "rb") as f:
        actual = hashlib.sha256(f.read()).hexdigest()
    if actual != expect_sha256.lower():
        return [f"{MANIFEST_NAME}: sha256 {actual} is not the pinned {expect_sha256}; nothing fetched"]
    paths, problems = listed_paths(manifest, expect_sha256)
    if problems:
        return problems
    for path in paths:
        if (why := check_key(path)) is not None:
            return [f"{path!r} {why}"]
        target = os.path.join(dest, *path.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        reader.download(_object(prefix, path), target)
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch a pinned model folder into a pod's volume.")
    parser.add_argument("--source", required=True, help="s3://BUCKET/PREFIX or gs://BUCKET/FOLDER")
    parser.add_argument("--dest", required=True, help="the folder to fetch into")
    parser.add_argument("--expect-sha256", required=True, help="the manifest's pinned SHA-256")
    args = parser.parse_args(argv)
    try:
        scheme, bucket, prefix = split_source(args.source)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    reader = S3Reader(bucket) if scheme == "s3" else GcsReader(bucket)
    try:
        problems = fetch(reader, prefix, args.dest, args.expect_sha256)
    except Exception as e:
        problems = [f"{args.source}: {type(e).__name__}: {e}"]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
