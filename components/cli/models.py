"""`inference-infra models`: the SHA-256 manifest of a model's weight files, its digest, and checks."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import click

from inference_infra.components import input_size
from inference_infra.components.cli import EXIT_POLICY, app
from inference_infra.components.errors import InputError, Problem


@app.group()
def models() -> None:
    """Model weights: manifests, the digest a fleet pins, and the verifier the nodes run."""


@models.command()
@click.argument("source")
@click.option(
    "--write/--print", default=False, help="Write the manifest beside the weights (default: print)."
)
@click.option(
    "--force",
    is_flag=True,
    help="With --write: replace a manifest already there that lists other files, sizes or digests.",
)
@click.option(
    "--allow-code",
    "--allow-pickle",
    "allow_code",
    is_flag=True,
    help="List .py and pickle files (.bin/.pt/.pth/.pkl) instead of refusing them; a fleet serving "
    "them must allow code with a reason (--allow-pickle: the old name).",
)
def manifest(source: str, write: bool, force: bool, allow_code: bool) -> None:
    """SHA-256 and size of every file under SOURCE (a directory, s3://bucket/prefix or gs://bucket/prefix).

    Prints the manifest (or, with --write, stores it beside the weights) and the manifest's own SHA-256
    on stderr: pin that digest in the fleet's weights (S3Weights(manifest_sha256=...)); nodes refuse a
    manifest with any other digest.
    """
    from inference_infra.components.models import manifest as m

    client: Any = None
    if source.startswith(("s3://", "gs://")):
        with _cloud_source(source):
            client = _client(source)
            reader = m.s3_entries if source.startswith("s3://") else m.gcs_entries
            entries = list(reader(source, client=client))
    else:
        root = Path(source)
        if not root.is_dir():
            raise InputError(_problem(Problem("SOURCE", source, "must be a directory, s3:// or gs:// URI")))
        outside = m.links_outside(root)
        if outside:
            shown = "; ".join(outside[:5]) + (f"; and {len(outside) - 5} more" if len(outside) > 5 else "")
            allowed = (
                f"has symbolic links that point out of the folder or nowhere ({shown}); the manifest would "
                "hash files from elsewhere on this machine. Copy the real files in (`cp -rL`, or "
                "`huggingface-cli download --local-dir DIR` instead of a cache snapshot) or remove the links"
            )
            raise InputError(_problem(Problem("SOURCE", source, allowed)))
        entries = list(m.local_entries(root))
    if not entries:
        raise InputError(_problem(Problem("SOURCE", source, "holds no files")))
    refused = m.entries_problems(entries, allow_code=allow_code)
    if refused:
        allowed = (
            f"has files a node would refuse ({'; '.join(refused)}); remove or convert them (pickle to "
            "safetensors), or pass --allow-code for .py and pickle files"
        )
        raise InputError(_problem(Problem("SOURCE", source, allowed)))
    text = m.dumps(m.build(entries))
    digest = m.digest(text)
    if not write:
        sys.stdout.write(text)
        _say_digest(digest, len(entries), source)
        return
    with _cloud_source(source):
        existing = _existing(source, client)
    if existing is not None and _same_files(existing, text):
        # Up to date; kept as it is, with its index of Neuron compiled artifacts (models compile-manifest).
        sys.stdout.write(m.digest(existing) + "\n")
        _say_digest(m.digest(existing), len(entries), f"{source.rstrip('/')}/{m.MANIFEST_NAME} (unchanged)")
        return
    if existing is not None and existing != text.encode() and not force:
        raise InputError(
            _problem(
                Problem(
                    "SOURCE",
                    source,
                    f"already holds a {m.MANIFEST_NAME} (sha256 {m.digest(existing)}) that disagrees with "
                    f"the files there now (sha256 {digest}); nodes pinned to the old digest will refuse the "
                    "new one. Check why the files changed, then pass --force to replace it and pin the new "
                    "digest",
                )
            )
        )
    if source.startswith(("s3://", "gs://")):
        bucket, prefix = m.split_uri(source)
        with _cloud_source(source):
            if source.startswith("s3://"):
                client.put_object(Bucket=bucket, Key=prefix + m.MANIFEST_NAME, Body=text.encode())
            else:
                client.bucket(bucket).blob(prefix + m.MANIFEST_NAME).upload_from_string(text)
    else:
        (Path(source) / m.MANIFEST_NAME).write_text(text)
    sys.stdout.write(digest + "\n")
    _say_digest(digest, len(entries), f"{source.rstrip('/')}/{m.MANIFEST_NAME}")


@models.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--manifest",
    "manifest_path",
    type=click.Path(dir_okay=False),
    help="The manifest file (default: DIRECTORY/inference-manifest.json).",
)
@click.option(
    "--expect-sha256",
    help="The manifest's pinned SHA-256 (as in the fleet's weights); without it the files are checked "
    "against whatever manifest is there (integrity, not authenticity).",
)
@click.option(
    "--allow-code", is_flag=True, help="Accept .py and pickle files, as a fleet allowing code does."
)
def verify(directory: str, manifest_path: str | None, expect_sha256: str | None, allow_code: bool) -> int:
    """Check a local copy of a model's weights as a node does before serving them (exit 1 when refused)."""
    from inference_infra.components.models import verify_weights as v

    if expect_sha256 is not None and not v.is_sha256(expect_sha256):
        raise InputError(
            f"models verify: {Problem('--expect-sha256', expect_sha256, 'must be 64 hex digits')}."
        )
    if not Path(directory).is_dir():
        problem = Problem("DIR", directory, "must be a folder holding the weights")
        raise InputError(f"models verify: {problem}.")
    manifest_file = manifest_path or str(Path(directory) / v.MANIFEST_NAME)
    if Path(manifest_file).is_file():  # a missing one is the verifier's refusal (exit 1)
        input_size.check_size(manifest_file, input_size.MAX_MANIFEST_BYTES, "--manifest")
    problems = v.verify(directory, manifest_file, expect_sha256, allow_code=allow_code)
    if problems:
        for line in problems:
            sys.stderr.write(f"weights verification failed: {directory}: {line}\n")
        return EXIT_POLICY
    pinned = "the pinned digest" if expect_sha256 else "an unpinned manifest (pass --expect-sha256)"
    sys.stderr.write(
        f"weights verified: {directory} against {pinned}, sha256 {v.manifest_sha256(manifest_file)}\n"
    )
    return 0


def _existing(source: str, client: Any) -> bytes | None:
    """The manifest already stored at SOURCE, or None (`client`: the cloud source's storage client)."""
    from inference_infra.components.models import manifest as mf

    if source.startswith("s3://"):
        bucket, prefix = mf.split_uri(source)
        try:
            return client.get_object(Bucket=bucket, Key=prefix + mf.MANIFEST_NAME)["Body"].read()
        except client.exceptions.NoSuchKey:
            return None
    if source.startswith("gs://"):
        bucket, prefix = mf.split_uri(source)
        blob = client.bucket(bucket).blob(prefix + mf.MANIFEST_NAME)
        return blob.download_as_bytes() if blob.exists() else None
    path = Path(source) / mf.MANIFEST_NAME
    if not path.is_file():
        return None
    return input_size.read_bytes(path, input_size.MAX_MANIFEST_BYTES, "manifest")


def _same_files(existing: bytes, text: str) -> bool:
    """The stored manifest lists exactly these files (whatever else it holds, e.g. a compiled index)."""
    try:
        stored = json.loads(existing)
    except ValueError:
        return False
    return isinstance(stored, dict) and stored.get("files") == json.loads(text)["files"]


def _say_digest(digest: str, files: int, where: str) -> None:
    sys.stderr.write(
        f"manifest: {files} file(s) -> {where}\n"
        f"manifest sha256: {digest} (pin it: S3Weights(manifest_sha256=...) on the fleet)\n"
    )


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
def _cloud_source(
    source: str, *, problem: Callable[[object], str] | None = None, verb: str = "read"
) -> Iterator[None]:
    """The cloud's own errors (no credentials, no such bucket, access denied) as one line, exit 2, in the
    words of the command (`problem`: `models manifest`'s by default)."""
    try:
        yield
    except InputError:
        raise
    except Exception as e:
        reason = _cloud_reason(e)
        if reason is None:
            raise
        raise InputError((problem or _problem)(f"cannot {verb} SOURCE {source!r}: {reason}")) from None


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


@models.command("compile-manifest")
@click.argument("source")
@click.option(
    "--artifacts",
    required=True,
    type=click.Path(file_okay=False),
    help="A folder of Neuron compiled artifacts (model.pt, neuron_config.json, ...), e.g. a node's "
    "/var/cache/inference-infra/neuron-compiled/<key>/0 copied off the machine.",
)
@click.option(
    "--key",
    "key_file",
    type=click.Path(dir_okay=False),
    help="The compile key the artifacts were compiled for (default: neuron-compile-key.json in the "
    "folder above --artifacts, where a Neuron node writes it).",
)
@click.option(
    "--expect-sha256",
    help="The weights manifest's currently pinned SHA-256: refuse to index into any other manifest.",
)
@click.option(
    "--write/--print",
    default=False,
    help="Upload the artifacts and the updated manifest beside the weights (default: print the manifest).",
)
def compile_manifest(
    source: str, artifacts: str, key_file: str | None, expect_sha256: str | None, write: bool
) -> None:
    """Record Neuron compiled artifacts beside the weights in SOURCE (a directory or s3://bucket/prefix).

    The artifacts go to SOURCE/neuron-compiled/<key id>/ with their own manifest (the weights' format),
    and the weights manifest indexes that manifest's SHA-256 under the compile key. Prints the updated
    weights manifest's SHA-256: pin it (S3Weights(manifest_sha256=...)) and set
    S3Weights(neuron_precompiled=True); nodes whose key matches then load the verified set instead of
    compiling, the others compile on the machine and say so.
    """
    from inference_infra.components.models import compiled as c
    from inference_infra.components.models import manifest as m

    if source.startswith("gs://"):
        raise InputError(
            _compile_problem(
                Problem("SOURCE", source, "must be a directory or s3:// URI (Neuron runs on AWS)")
            )
        )
    folder = Path(artifacts)
    if not folder.is_dir():
        raise InputError(_compile_problem(Problem("--artifacts", artifacts, "must be a directory")))
    key_path = Path(key_file) if key_file else folder.parent / c.KEY_FILE
    if not key_path.is_file():
        raise InputError(
            _compile_problem(
                Problem("--key", str(key_path), f"must be a file (the {c.KEY_FILE} a Neuron node writes)")
            )
        )
    key, compiled_from, why = c.read_key_file(input_size.read_text(key_path, 1024 * 1024, "--key"))
    if key is None:
        raise InputError(_compile_problem(Problem("--key", str(key_path), why)))
    client = _client(source) if source.startswith("s3://") else None
    with _compile_source(source):
        existing = _existing(source, client)
    if existing is None:
        raise InputError(
            _compile_problem(
                Problem(
                    "SOURCE", source, f"holds no {m.MANIFEST_NAME}; run `inference-infra models manifest`"
                )
            )
        )
    if expect_sha256 is not None and m.digest(existing) != expect_sha256.lower():
        raise InputError(
            _compile_problem(
                Problem(
                    "--expect-sha256",
                    expect_sha256,
                    f"is not the SHA-256 of the manifest in SOURCE ({m.digest(existing)})",
                )
            )
        )
    try:
        document = json.loads(existing)
        files = document["files"]
    except (ValueError, KeyError, TypeError):
        raise InputError(
            _compile_problem(Problem("SOURCE", source, f"holds a {m.MANIFEST_NAME} that is not a manifest"))
        ) from None
    if c.weights_digest(files) != compiled_from:
        raise InputError(
            _compile_problem(
                Problem(
                    "--key",
                    str(key_path),
                    f"names weights {compiled_from}, not the weights the manifest in SOURCE lists "
                    f"({c.weights_digest(files)}): these artifacts were compiled from other weights",
                )
            )
        )
    try:
        entries = list(m.local_entries(folder))
    except ValueError as e:
        raise InputError(_compile_problem(Problem("--artifacts", artifacts, str(e)))) from None
    refused = c.artifacts_problems(entries)
    if "model.pt" not in {e.path for e in entries}:
        refused.append("model.pt is missing (NxDI's compiled model: not a Neuron compile)")
    if refused:
        raise InputError(
            _compile_problem(
                Problem("--artifacts", artifacts, f"has files a node would refuse ({'; '.join(refused)})")
            )
        )
    set_text = c.artifacts_manifest(entries)
    updated = m.dumps(c.with_artifacts(document, key, m.digest(set_text)))
    digest = m.digest(updated)
    prefix = c.artifact_prefix(key)
    if not write:
        sys.stdout.write(updated)
        sys.stderr.write(
            f"compile-manifest: {len(entries)} artifact file(s) for key {c.compile_key_id(key)} -> "
            f"{source.rstrip('/')}/{prefix}; weights manifest sha256 would be {digest} (--write to store)\n"
        )
        return
    with _compile_source(source):
        _store(source, client, prefix, folder, entries, set_text)
        _store_manifest(source, client, updated)
    sys.stdout.write(digest + "\n")
    sys.stderr.write(
        f"compile-manifest: {len(entries)} artifact file(s) -> {source.rstrip('/')}/{prefix}\n"
        f"manifest sha256: {digest} (pin it: S3Weights(manifest_sha256=..., neuron_precompiled=True))\n"
    )


def _compile_problem(problem: object) -> str:
    return f"models compile-manifest: {problem}"


def _compile_source(source: str) -> AbstractContextManager[None]:
    return _cloud_source(source, problem=_compile_problem, verb="use")


def _store(source: str, client: Any, prefix: str, folder: Path, entries: list, set_text: str) -> None:
    """The artifact files, then their manifest, under SOURCE/<prefix>."""
    from inference_infra.components.models import manifest as m

    if client is None:
        target = Path(source) / prefix
        for entry in entries:
            destination = target / entry.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / entry.path, destination)
        (target / m.MANIFEST_NAME).write_text(set_text)
        return
    bucket, base = m.split_uri(source)
    for entry in entries:
        client.upload_file(str(folder / entry.path), bucket, base + prefix + entry.path)
    client.put_object(Bucket=bucket, Key=base + prefix + m.MANIFEST_NAME, Body=set_text.encode())


def _store_manifest(source: str, client: Any, text: str) -> None:
    from inference_infra.components.models import manifest as m

    if client is None:
        (Path(source) / m.MANIFEST_NAME).write_text(text)
        return
    bucket, base = m.split_uri(source)
    client.put_object(Bucket=bucket, Key=base + m.MANIFEST_NAME, Body=text.encode())
