"""Copy a model's weights from S3 onto the node's cache, driven by its pinned manifest, then verify them.

Runs on the node at every boot as the prefetch unit (python3 3.9+, standard library only, beside
verify_weights.py), sandboxed by systemd: the file system is read-only but for the destination and
the node exporter's textfile folder.

1. Fetch the manifest first (`s5cmd cp --raw`, no wildcard) and check its SHA-256 against the digest
   pinned in the fleet's configuration; a manifest anyone else wrote is refused before any key in it
   is used.
2. Check every listed path (verify_weights.check_key: no `..`, absolute paths, backslashes, control
   characters or empty segments) and build each local path here, from the destination and the
   checked path; remove files under the destination the manifest does not list.
3. Download exactly the listed objects with one `s5cmd run` of `cp --raw` commands: the same
   workers, concurrency and part size as a wildcard copy, but s5cmd never chooses a local path
   from an object key (peak/s5cmd#872: 2.3.0 follows `..` in keys) and never expands a pattern.
4. Verify the directory with verify_weights (sizes, SHA-256, allowed formats, nothing unlisted);
   only then write the marker holding the manifest's digest, which the engines check.
5. `cp --if-size-differ` keeps a file already there with the listed size, so a same-size file whose
   bytes differ (changed on the node's cache, or a shard re-uploaded under the same size) would fail
   step 4 at every boot. When step 4 fails, every file whose SHA-256 is not the manifest's is removed
   and steps 3-4 run once more: those files are fetched anew, the others are kept.

Every outcome sets the node exporter gauge `inference_model_verification_failed` and the CloudWatch
metric InferenceInfra/ModelVerificationFailed (dimension Fleet); a failed publish is logged, not hidden.

usage: prefetch_weights.py --source s3://BUCKET/PREFIX --dest DIR --manifest-sha256 HEX --s5cmd PATH
                           [--allow-code] [--fleet NAME --region REGION] [--textfile-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

try:  # on the node: the verifier's copy beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import verify_weights as vw
except ImportError:  # in the library (tests)
    from inference_infra.components.models import verify_weights as vw
finally:
    sys.path.pop(0)

NAMESPACE = "InferenceInfra"
METRIC = "ModelVerificationFailed"
WORKERS = int(os.environ.get("S5CMD_WORKERS", "64"))  # objects in flight
CONCURRENCY = int(os.environ.get("S5CMD_CONCURRENCY", "16"))  # parts in flight per object
PART_SIZE_MIB = 64


def log(message: str) -> None:
    sys.stderr.write(f"prefetch: {message}\n")
    sys.stderr.flush()


def copy_commands(source: str, dest: str, paths: list[str]) -> list[str]:
    """One `cp` line of an s5cmd run file per listed path (each already passed check_key)."""
    lines = []
    for path in paths:
        why = vw.check_key(path)
        if why is not None:  # read_manifest refused it already; never build a path from an unchecked key
            raise ValueError(f"manifest path {path!r} {why}")
        local = os.path.join(dest, *path.split("/"))
        words = ["cp", "--raw", "--if-size-differ", "--concurrency", str(CONCURRENCY)]
        words += ["--part-size", str(PART_SIZE_MIB), f"{source}/{path}", local]
        lines.append(" ".join(shlex.quote(w) for w in words))
    return lines


def prune(dest: str, listed: set[str]) -> list[str]:
    """Remove what the manifest does not list (old shards, partial downloads, links); return it."""
    removed = []
    for base, dirs, names in os.walk(dest, topdown=False):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            full = os.path.join(base, name)
            relative = os.path.relpath(full, dest).replace(os.sep, "/")
            if relative in listed or relative in vw.SKIPPED:
                continue
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.remove(full)
            removed.append(relative)
        if base != dest and not os.listdir(base):
            os.rmdir(base)
    return removed


def publish(args: argparse.Namespace, failed: bool) -> None:
    """The outcome as metrics: the textfile gauge, and CloudWatch (its error is logged, not hidden)."""
    if args.textfile_dir and os.path.isdir(args.textfile_dir):
        vw.write_gauge(args.textfile_dir, args.dest, failed)
    if not args.fleet:
        return
    aws = shutil.which("aws")
    if aws is None:
        log(f"cannot publish {NAMESPACE}/{METRIC}: the aws command is not installed")
        return
    command = [aws, "cloudwatch", "put-metric-data", "--namespace", NAMESPACE, "--metric-name", METRIC]
    command += ["--dimensions", f"Fleet={args.fleet}", "--value", str(int(failed))]
    if args.region:
        command += ["--region", args.region]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log(f"publishing {NAMESPACE}/{METRIC} failed (exit {done.returncode}): {done.stderr.strip()}")


def fail(args: argparse.Namespace, problems: list[str]) -> int:
    for problem in problems:
        sys.stderr.write(f"weights verification failed: {args.dest}: {problem}\n")
    vw.remove_marker(args.dest)
    publish(args, True)
    return 1


def download(source: str, dest: str, expected: str, s5cmd: str) -> tuple[list[str], list[str]]:
    """Steps 1-3: the pinned manifest, then exactly the objects it lists. Returns (paths, problems)."""
    source = source.rstrip("/")
    os.makedirs(dest, exist_ok=True)
    manifest = os.path.join(dest, vw.MANIFEST_NAME)
    fetched = subprocess.run(
        [s5cmd, "--retry-count", "10", "cp", "--raw", f"{source}/{vw.MANIFEST_NAME}", manifest],
        capture_output=True,
        text=True,
        check=False,
    )
    if fetched.returncode != 0:
        return [], [f"{vw.MANIFEST_NAME}: cannot be fetched from {source}: {fetched.stderr.strip()}"]
    paths, problems = vw.listed_paths(manifest, expected)
    if problems:
        return [], problems
    removed = prune(dest, set(paths))
    if removed:
        log(f"removed {len(removed)} file(s) the manifest does not list")
    with tempfile.TemporaryDirectory() as scratch:
        commands = os.path.join(scratch, "s5cmd-commands.txt")
        with open(commands, "w") as f:
            f.write("\n".join(copy_commands(source, dest, paths)) + "\n")
        copied = subprocess.run(
            [s5cmd, "--numworkers", str(WORKERS), "--retry-count", "10", "run", commands],
            capture_output=True,
            text=True,
            check=False,
        )
    if copied.returncode != 0:
        return [], [f"the download from {source} failed: {copied.stderr.strip()[-2000:]}"]
    return paths, []


def remove_stale(dest: str, expected: str) -> list[str]:
    """Remove every listed file whose SHA-256 is not the manifest's (whatever its size); return them."""
    entries, problems = vw.read_manifest(os.path.join(dest, vw.MANIFEST_NAME), expected)
    if problems:
        return []
    removed = []
    for entry in entries:
        local = os.path.join(dest, *entry["path"].split("/"))
        if not os.path.isfile(local) or os.path.islink(local):
            continue
        _, digest = vw.file_sha256(local)
        if digest != entry["sha256"]:
            os.remove(local)
            removed.append(entry["path"])
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="prefetch_weights.py", description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="s3://bucket/prefix of the weights")
    parser.add_argument("--dest", required=True, help="the local model directory")
    parser.add_argument("--manifest-sha256", required=True, help="the manifest's pinned SHA-256")
    parser.add_argument("--s5cmd", required=True, help="the pinned s5cmd")
    parser.add_argument("--allow-code", action="store_true", help="accept .py and pickle files")
    parser.add_argument("--fleet", default="", help="the CloudWatch metric's Fleet dimension")
    parser.add_argument("--region", default="", help="the CloudWatch metric's region")
    parser.add_argument("--textfile-dir", default="", help="the node exporter's textfile folder")
    args = parser.parse_args(argv)
    if not vw.is_sha256(args.manifest_sha256) or not args.source.startswith("s3://"):
        parser.error("--manifest-sha256 must be 64 hex digits and --source an s3:// URI")
    expected = args.manifest_sha256.lower()
    started = time.monotonic()
    if os.path.isdir(args.dest):
        vw.remove_marker(args.dest)
    paths, problems = download(args.source, args.dest, expected, args.s5cmd)
    if problems:
        return fail(args, problems)
    manifest = os.path.join(args.dest, vw.MANIFEST_NAME)
    problems = vw.verify(args.dest, manifest, expected, allow_code=args.allow_code)
    stale = remove_stale(args.dest, expected) if problems else []
    if stale:
        log(f"{len(stale)} file(s) did not match their SHA-256 and are fetched anew: {', '.join(stale[:5])}")
        paths, problems = download(args.source, args.dest, expected, args.s5cmd)
        if problems:
            return fail(args, problems)
        problems = vw.verify(args.dest, manifest, expected, allow_code=args.allow_code)
    if problems:
        return fail(args, problems)
    vw.write_marker(args.dest, expected)
    publish(args, False)
    log(f"{args.source} -> {args.dest}: {len(paths)} file(s) verified in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
