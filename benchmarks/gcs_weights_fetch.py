"""The GCP weights unit's download (manifest-driven, by exact object names) against a plain parallel copy.

    .venv/bin/python benchmarks/gcs_weights_fetch.py [--shards 64] [--shard-mib 32] [--runs 5]

Serves SHARDS objects of SHARD_MIB MiB from a Cloud Storage JSON API stand-in on loopback (the same
process, threads), then times, median of RUNS:

- manifest-driven: `components/gcp/node/gcs_weights.Downloader` as the node runs it: the pinned
  manifest first, then each listed object by its exact name into a path built from the checked key,
  32 connections (objects larger than the slice in ranged reads);
- plain copy: every object fetched whole into the same folder layout with the same 32 connections,
  no manifest, no key checks (what a wildcard copy does once it has the listing).

Both exclude hashing; the verification (the shared verifier over every byte) is timed apart. The
issue's bound for the download: manifest-driven at most 1.10x the plain copy. On loopback the server
is Python too, so the figures measure the client's overhead, not a real network.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from inference_infra.components.gcp.node import gcs_weights
from inference_infra.components.models import verify_weights

CONNECTIONS = 32


def serve(objects: dict[str, bytes]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.endswith("/token"):
                return self._send(200, b'{"access_token": "t", "expires_in": 3600}')
            data = objects[unquote(path.rsplit("/o/", 1)[1])]
            if "Range" in self.headers:
                first, last = self.headers["Range"].removeprefix("bytes=").split("-")
                data = data[int(first) : int(last) + 1]
            self._send(200, data)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def plain_copy(url: str, names: list[str], root: Path) -> None:
    def get(name: str) -> None:
        target = root / name.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        quoted = urllib.request.quote(name, safe="")
        with (
            urllib.request.urlopen(f"{url}/storage/v1/b/models/o/{quoted}?alt=media") as r,
            target.open("wb") as f,
        ):
            shutil.copyfileobj(r, f, 1024 * 1024)

    with ThreadPoolExecutor(CONNECTIONS) as pool:
        list(pool.map(get, names))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--shard-mib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    shard = os.urandom(args.shard_mib * 1024 * 1024)
    files = {f"model-{i:05d}-of-{args.shards:05d}.safetensors": shard for i in range(args.shards)}
    digest = hashlib.sha256(shard).hexdigest()
    entries = [{"path": p, "size": len(shard), "sha256": digest} for p in sorted(files)]
    manifest = (json.dumps({"algorithm": "sha256", "files": entries, "version": 1}, indent=2) + "\n").encode()
    objects = {f"llama/{p}": d for p, d in files.items()}
    objects["llama/inference-manifest.json"] = manifest
    server, url = serve(objects)
    config = {"storage_url": url, "connections": CONNECTIONS, "slice_mib": 64, "backoff_seconds": 0}
    pinned = hashlib.sha256(manifest).hexdigest()
    model = {"bucket": "models", "prefix": "llama", "folder": "llama", "manifest_sha256": pinned}
    timings: dict[str, list[float]] = {"manifest-driven": [], "plain copy": [], "verification": []}
    try:
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as scratch:
                root = Path(scratch)
                started = time.perf_counter()
                plain_copy(url, sorted(n for n in objects if n.endswith(".safetensors")), root / "plain")
                timings["plain copy"].append(time.perf_counter() - started)
                shutil.rmtree(root / "plain")
                downloader = gcs_weights.Downloader(config, gcs_weights.Token(url))
                started = time.perf_counter()
                gcs_weights.fetch(model, str(root / "staged"), downloader)
                timings["manifest-driven"].append(time.perf_counter() - started)
                started = time.perf_counter()
                staged = str(root / "staged")
                problems = verify_weights.verify(staged, f"{staged}/inference-manifest.json", pinned)
                timings["verification"].append(time.perf_counter() - started)
                assert problems == [], problems
    finally:
        server.shutdown()
    size_mib = args.shards * args.shard_mib
    shape = f"{args.shards} shards x {args.shard_mib} MiB = {size_mib} MiB"
    print(f"{shape}, {CONNECTIONS} connections, median of {args.runs}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"  {name:16s} {median:6.2f} s  {size_mib / median:8.0f} MiB/s")
    ratio = statistics.median(timings["manifest-driven"]) / statistics.median(timings["plain copy"])
    print(f"  manifest-driven / plain copy: {ratio:.2f}x (bound 1.10x)")


if __name__ == "__main__":
    main()
