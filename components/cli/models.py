"""`inference-infra models`: the SHA-256 manifest of a model's weight files."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from inference_infra.components.cli import app
from inference_infra.components.errors import InputError, Problem


@app.group()
def models() -> None:
    """Model weights: manifests the node prefetch verifies before serving."""


@models.command()
@click.argument("source")
@click.option(
    "--write/--print", default=False, help="Write the manifest beside the weights (default: print)."
)
@click.option("--allow-pickle", is_flag=True, help="List .bin/.pt/.pth/.pkl files instead of refusing them.")
def manifest(source: str, write: bool, allow_pickle: bool) -> None:
    """SHA-256 and size of every file under SOURCE (a directory, s3://bucket/prefix or gs://bucket/prefix)."""
    from inference_infra.components.models import manifest as m

    if source.startswith(("s3://", "gs://")):
        with _cloud_source(source):
            client = _client(source)
            reader = m.s3_entries if source.startswith("s3://") else m.gcs_entries
            entries = list(reader(source, client=client))
    else:
        root = Path(source)
        if not root.is_dir():
            raise InputError(_problem(Problem("SOURCE", source, "must be a directory, s3:// or gs:// URI")))
        entries = list(m.local_entries(root))
    if not entries:
        raise InputError(_problem(Problem("SOURCE", source, "holds no files")))
    pickles = [e.path for e in entries if m.is_pickle(e.path)]
    if pickles and not allow_pickle:
        allowed = (
            f"has pickle files ({', '.join(pickles)}); convert them to safetensors or pass --allow-pickle"
        )
        raise InputError(_problem(Problem("SOURCE", source, allowed)))
    text = m.dumps(m.build(entries))
    if not write:
        sys.stdout.write(text)
        return
    if source.startswith(("s3://", "gs://")):
        bucket, prefix = m.split_uri(source)
        with _cloud_source(source):
            if source.startswith("s3://"):
                client.put_object(Bucket=bucket, Key=prefix + m.MANIFEST_NAME, Body=text.encode())
            else:
                client.bucket(bucket).blob(prefix + m.MANIFEST_NAME).upload_from_string(text)
    else:
        (Path(source) / m.MANIFEST_NAME).write_text(text)
    sys.stderr.write(f"manifest: {len(entries)} file(s) -> {source.rstrip('/')}/{m.MANIFEST_NAME}\n")


def _problem(problem: object) -> str:
    return f"models manifest: {problem}"


_CLIENT_PACKAGES = {
    "s3://": ("boto3", "inference-infra[aws]"),
    "gs://": ("google-cloud-storage", "google-cloud-storage"),
}


def _client(source: str) -> Any:
    """The storage client for a cloud SOURCE; a missing client library is bad input, not a bug."""
    package, install = _CLIENT_PACKAGES[source[:5]]
    try:
        if source.startswith("s3://"):
            import boto3

            return boto3.client("s3")
        from google.cloud import (
            storage,
        )  # ImportError, not only ModuleNotFoundError, when google.cloud is there

        return storage.Client()
    except ImportError:
        raise InputError(
            _problem(
                f"SOURCE {source!r} needs the {package} package, which {sys.executable} does not have; "
                f"install it with `{sys.executable} -m pip install '{install}'`"
            )
        ) from None


@contextmanager
def _cloud_source(source: str) -> Iterator[None]:
    """The cloud's own errors (no credentials, no such bucket, access denied) as one line, exit 2."""
    try:
        yield
    except InputError:
        raise
    except Exception as e:
        reason = _cloud_reason(e)
        if reason is None:
            raise
        raise InputError(_problem(f"cannot read SOURCE {source!r}: {reason}")) from None


def _cloud_reason(error: Exception) -> str | None:
    """What a botocore or Google client error means for the user, or None for anything else (a bug)."""
    module = type(error).__module__
    name = type(error).__name__
    if module.startswith("botocore"):
        if name in ("NoCredentialsError", "PartialCredentialsError", "NoRegionError", "ProfileNotFound"):
            return (
                f"{error} (configure AWS credentials: AWS_PROFILE, environment variables or an instance role)"
            )
        code = getattr(error, "response", {}).get("Error", {}).get("Code", "")
        if code == "NoSuchBucket":
            return "the bucket does not exist"
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"):
            return f"access denied ({code}); check the credentials and the bucket policy"
        return f"{name}: {error}"
    if module.startswith(("google.auth", "google.api_core", "google.cloud")):
        if name == "DefaultCredentialsError":
            return (
                "no Google credentials (run `gcloud auth application-default login` or set "
                "GOOGLE_APPLICATION_CREDENTIALS)"
            )
        if name == "NotFound":
            return "the bucket or prefix does not exist"
        if name == "Forbidden":
            return "access denied; check the credentials and the bucket's IAM"
        return f"{name}: {error}"
    return None
