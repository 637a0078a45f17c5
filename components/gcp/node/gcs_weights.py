"""The weights unit of a GCP node: each model folder fetched by its pinned manifest, then verified.

Runs on the node as `inference-weights.service` (sandboxed: read-only system, writes only the models
folder and the metrics folder, no new privileges, no capabilities), standard-library Python 3.9+,
beside the shared verifier `verify_weights.py`. Its one input is the node's weights configuration,
a JSON file the boot script writes:

    {"models_dir": "/mnt/local-ssd/models", "mode": "fetch" | "wait", "lock": false,
     "allow_code": false, "textfile_dir": "/var/lib/node_exporter/textfile_collector" or null,
     "wait_seconds": 7200, "connections": 32, "slice_mib": 64,
     "models": [{"bucket": "b", "prefix": "llama-3.1-8b", "folder": "llama-3.1-8b",
                 "manifest_sha256": "<64 hex>"}]}

Layout: a model lives in `<models_dir>/<folder>/<manifest_sha256>/`, named by the digest the stack
pins. It is written only under another name (`<folder>/.incoming-<digest>`) and renamed into place
once every file matched, with the marker `.inference-verified` (holding the digest) inside. A
directory under its final name is complete and verified and is never written again: no reader sees a
half-written model, and no writer writes where engines read.

mode "fetch" (local SSD, boot disk, the shared cache's writer):

1. A directory already under its final name is verified again (a boot disk keeps its files across
   reboots, and they can be changed there); one that fails is moved aside and fetched anew.
2. The manifest first, refused unless its SHA-256 is the pinned one; every path in it must pass
   `check_key` (no `..`, absolute path, backslash, control character or empty segment). Then each
   listed object is downloaded by its exact name (Cloud Storage JSON API, `alt=media`) into a file
   whose path this script builds from the checked key: no listing, no wildcard, and an object the
   manifest does not name is never fetched. Objects larger than one slice come in parallel ranged
   reads, `connections` at a time across all files.
3. The copy is verified (`verify_weights.verify`), marked, and renamed into place.

With `lock` (the writer of the shared Filestore cache) one writer works at a time (flock on
`<models_dir>/.prefetch.lock`).

mode "wait" (a serving node that mounts the shared cache read-only) waits until the writer has
published `<folder>/<digest>/` with a marker holding the pinned digest, for up to wait_seconds, then
verifies it against the pinned manifest: the manifest's SHA-256, the file list (nothing unlisted),
formats and sizes. It does not hash the files' contents again: the share is writable only from the
writer's ranges (FilestoreModelCache.writer_ranges), the writer hashed every file against the pinned
manifest before giving the directory its name, and hashing every model over NFS on every reader at
every boot would multiply the fleet's cold start.

Exit 0 when every model is ready, 1 otherwise, with one line per problem on stderr; the node exporter
gauge `inference_model_verification_failed` (alert ModelVerificationFailed) says the same per
directory. Exit 2: bad usage or configuration.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
try:  # on the node: the shared verifier beside this file
    import verify_weights as vw
except ImportError:  # imported from the package (tests)
    from inference_infra.components.models import verify_weights as vw

STORAGE_URL = "https://storage.googleapis.com"
# The metadata server by address: the unit resolves no name to reach it.
METADATA_URL = "http://169.254.169.254"
TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
STAGING_PREFIX = ".incoming-"
ASIDE_PREFIX = ".refused-"
LOCK_NAME = ".prefetch.lock"
POLL_SECONDS = 10
RETRIES = 5
_TIMEOUT = 120


def log(message: str) -> None:
    sys.stderr.write(f"inference-weights: {message}\n")
    sys.stderr.flush()


class RefusedError(Exception):
    """The model may not be served (its manifest or a download); the message names what and why."""


class Token:
    """The node service account's access token from the metadata server, refreshed before it expires."""

    def __init__(self, metadata_url: str) -> None:
        self._url = metadata_url.rstrip("/") + TOKEN_PATH
        self._lock = threading.Lock()
        self._value, self._expires = "", 0.0

    def get(self) -> str:
        with self._lock:
            if time.monotonic() > self._expires - 60:
                request = urllib.request.Request(self._url, headers={"Metadata-Flavor": "Google"})
                with urllib.request.urlopen(request, timeout=30) as response:
                    body = json.load(response)
                self._value = body["access_token"]
                self._expires = time.monotonic() + float(body.get("expires_in", 300))
            return self._value


def object_url(storage_url: str, bucket: str, name: str) -> str:
    """The JSON API media URL of one object; the whole name is percent-encoded ('/' too)."""
    bucket, name = urllib.parse.quote(bucket, safe=""), urllib.parse.quote(name, safe="")
    return f"{storage_url.rstrip('/')}/storage/v1/b/{bucket}/o/{name}?alt=media"


def local_path(root: str, key: str) -> str:
    """The file a checked manifest key is written to: built here, segment by segment, under root."""
    why = vw.check_key(key)
    if why is not None:
        raise RefusedError(f"{key!r} {why}")
    return os.path.join(root, *key.split("/"))


class Downloader:
    """Objects by exact name into local files, in ranged slices over a pool of connections."""

    def __init__(self, config: dict, token: Token) -> None:
        self.storage_url = config.get("storage_url", STORAGE_URL)
        self.connections = int(config.get("connections", 32))
        self.slice_bytes = int(config.get("slice_mib", 64)) * 1024 * 1024
        self.backoff_seconds = float(config.get("backoff_seconds", 1))
        self.token = token

    def get(self, bucket: str, name: str, target: str, offset: int = 0, length: int | None = None) -> None:
        """Write bytes [offset, offset + length) of the object at the same offset of target."""
        url = object_url(self.storage_url, bucket, name)
        for attempt in range(RETRIES):
            try:
                headers = {"Authorization": f"Bearer {self.token.get()}"}
                if length is not None:
                    headers["Range"] = f"bytes={offset}-{offset + length - 1}"
                request = urllib.request.Request(url, headers=headers)
                # One `with` per resource: the parenthesized form needs Python 3.10, the node may have 3.9.
                with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: SIM117
                    with open(target, "r+b") as out:
                        out.seek(offset)
                        shutil.copyfileobj(response, out, 1024 * 1024)
                return
            except urllib.error.HTTPError as e:
                if e.code not in (408, 429) and e.code < 500:
                    raise RefusedError(f"gs://{bucket}/{name}: HTTP {e.code} {e.reason}") from e
                error: Exception = e
            except (urllib.error.URLError, OSError) as e:
                error = e
            if attempt + 1 < RETRIES:
                time.sleep(min(self.backoff_seconds * 2**attempt, 30))
        raise RefusedError(f"gs://{bucket}/{name}: failed after {RETRIES} attempts ({error})")

    def fetch_all(self, bucket: str, prefix: str, entries: list[dict], root: str) -> None:
        """Every entry (path, size) of a pinned manifest into root, each at the path built from its key."""
        jobs = []
        for entry in entries:
            target = local_path(root, entry["path"])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.truncate(entry["size"])
            name = f"{prefix}/{entry['path']}" if prefix else entry["path"]
            if entry["size"] <= self.slice_bytes:
                jobs.append((name, target, 0, None))
                continue
            for offset in range(0, entry["size"], self.slice_bytes):
                jobs.append((name, target, offset, min(self.slice_bytes, entry["size"] - offset)))
        with ThreadPoolExecutor(max_workers=max(1, min(self.connections, len(jobs)))) as pool:
            for future in [pool.submit(self.get, bucket, *job) for job in jobs]:
                future.result()


def fetch(model: dict, staging: str, downloader: Downloader) -> None:
    """The pinned manifest, then every object it lists, into staging (a fresh directory)."""
    bucket, prefix, sha = model["bucket"], model["prefix"].strip("/"), model["manifest_sha256"]
    os.makedirs(staging)
    manifest = os.path.join(staging, vw.MANIFEST_NAME)
    open(manifest, "wb").close()
    downloader.get(bucket, f"{prefix}/{vw.MANIFEST_NAME}" if prefix else vw.MANIFEST_NAME, manifest)
    entries, problems = vw.read_manifest(manifest, sha)
    if problems:
        raise RefusedError("; ".join(problems))
    downloader.fetch_all(bucket, prefix, entries, staging)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def ensure(model: dict, config: dict, downloader: Downloader) -> tuple[str, list[str]]:
    """Make `<models_dir>/<folder>/<digest>/` a verified copy of the model: (its path, problems)."""
    sha, allow_code = model["manifest_sha256"], bool(config.get("allow_code"))
    folder = os.path.join(config["models_dir"], model["folder"])
    final = os.path.join(folder, sha)
    if config["mode"] == "wait":
        problems = wait_for(final, sha, float(config.get("wait_seconds", 7200)))
        if problems:
            return final, problems
        # The writer hashed it; a reader checks the rest against the pinned manifest (no NFS read of it all).
        return final, vw.verify(final, os.path.join(final, vw.MANIFEST_NAME), sha, allow_code, hashes=False)
    if os.path.lexists(final):
        problems = vw.verify(final, os.path.join(final, vw.MANIFEST_NAME), sha, allow_code)
        if not problems and vw.read_marker(final) == sha:
            log(f"{final}: verified again against manifest sha256 {sha}")
            return final, []
        why = "; ".join(problems) or "no marker"
        log(f"{final}: no longer matches its pinned manifest ({why}); fetching anew")
        aside = os.path.join(folder, f"{ASIDE_PREFIX}{sha}-{os.getpid()}")
        os.rename(final, aside)  # out of the engines' path at once, then gone
        _remove(aside)
    staging = os.path.join(folder, f"{STAGING_PREFIX}{sha}")
    _remove(staging)  # an interrupted fetch
    started = time.monotonic()
    try:
        fetch(model, staging, downloader)
    except (RefusedError, OSError) as e:
        _remove(staging)
        return final, [str(e)]
    problems = vw.verify(staging, os.path.join(staging, vw.MANIFEST_NAME), sha, allow_code)
    if problems:
        _remove(staging)
        return final, problems
    vw.write_marker(staging, sha)
    os.rename(staging, final)
    log(f"{final}: fetched and verified in {time.monotonic() - started:.0f}s")
    return final, []


def wait_for(final: str, sha: str, seconds: float, sleep=time.sleep, clock=time.monotonic) -> list[str]:
    """Wait until the cache's writer publishes `final` marked with the pinned digest."""
    deadline = clock() + seconds
    while True:
        marker = vw.read_marker(final)
        if marker == sha:
            log(f"{final}: published by the cache's writer, marked with the pinned sha256")
            return []
        if clock() >= deadline:
            found = f"a marker for {marker}" if marker else "no marker"
            return [
                f"{final}: the cache's writer has not published it after {seconds:.0f}s ({found}); the "
                f"writer fetches it when its configuration pins sha256 {sha}"
            ]
        sleep(POLL_SECONDS)


def run(config: dict, downloader: Downloader | None = None) -> list[str]:
    """Every model of the configuration ready, or the problems; the gauge written per directory."""
    downloader = downloader or Downloader(config, Token(config.get("metadata_url", METADATA_URL)))
    if config["mode"] == "fetch":
        os.makedirs(config["models_dir"], exist_ok=True)
    lock_path = os.path.join(config["models_dir"], LOCK_NAME) if config.get("lock") else os.devnull
    with open(lock_path, "a") as lock:
        if config.get("lock"):
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        models = config["models"]
        with ThreadPoolExecutor(max_workers=max(1, len(models))) as pool:
            results = list(pool.map(lambda m: ensure(m, config, downloader), models))
    textfile_dir = config.get("textfile_dir")
    problems = []
    for final, found in results:
        if textfile_dir and os.path.isdir(textfile_dir):
            vw.write_gauge(textfile_dir, final, bool(found))
        problems += [f"{final}: {line}" if not line.startswith(final) else line for line in found]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gcs_weights.py", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the node's weights configuration (JSON)")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as f:
            config = json.load(f)
        if config["mode"] not in ("fetch", "wait") or not isinstance(config["models"], list):
            raise ValueError("mode must be fetch or wait, models a list")
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write(f"gcs_weights.py: {args.config}: {e}\n")
        return 2
    problems = run(config)
    for line in problems:
        sys.stderr.write(f"weights verification failed: {line}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
