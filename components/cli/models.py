"""`inference-infra models`: the SHA-256 manifest of a model's weight files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from inference_infra.components.cli import app


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
    from inference_infra.components.errors import InputError, Problem
    from inference_infra.components.models import manifest as m

    if source.startswith("s3://"):
        entries = list(m.s3_entries(source))
    elif source.startswith("gs://"):
        entries = list(m.gcs_entries(source))
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
    if source.startswith("s3://"):
        import boto3

        bucket, prefix = m.split_uri(source)
        boto3.client("s3").put_object(Bucket=bucket, Key=prefix + m.MANIFEST_NAME, Body=text.encode())
    elif source.startswith("gs://"):
        from google.cloud import storage

        bucket, prefix = m.split_uri(source)
        storage.Client().bucket(bucket).blob(prefix + m.MANIFEST_NAME).upload_from_string(text)
    else:
        (Path(source) / m.MANIFEST_NAME).write_text(text)
    sys.stderr.write(f"manifest: {len(entries)} file(s) -> {source.rstrip('/')}/{m.MANIFEST_NAME}\n")


def _problem(problem: object) -> str:
    return f"models manifest: {problem}"
