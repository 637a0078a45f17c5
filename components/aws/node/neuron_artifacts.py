"""Put a Neuron node's precompiled artifacts in place before its engines start, or say it compiles.

Runs after the weight prefetch, before the engines (python3 3.9+, standard library only, beside
verify_weights.py and prefetch_weights.py), sandboxed: writable are the compiled folder and the node
exporter's textfile folder.

1. Read the weights manifest the prefetch verified (its SHA-256 checked again against the pin) and write
   <compiled>/neuron-compile-key.json: this node's compile key and the weights' digest, the input of
   `inference-infra models compile-manifest` when this node compiles.
2. Look up the key in the manifest's index (verify_weights.compiled_entry: the same key, compiled from these
   weights). None: every engine compiles on this node; said in the log and by the gauge
   inference_neuron_compile_on_node 1.
3. Otherwise fetch the set's manifest (checked against the index's SHA-256) and exactly the files it lists
   into <compiled>/precompiled (prefetch_weights.download), and verify them with the one verifier
   (sizes, SHA-256, formats: model.pt is the one code file allowed). A refused set is removed, every
   problem logged and inference_model_verification_failed set for its folder (the ModelVerificationFailed
   alert); the engines then compile on the node, from the verified weights.
4. Copy the verified set into each engine's folder (<compiled>/<i>, which the engine mounts at
   $NEURON_COMPILED_ARTIFACTS) unless it holds this set already (its marker); os.copy_file_range lets
   XFS share the blocks (reflink) instead of copying them.

Exit 0 in every case but a bad command line: the engines always start, with or without the artifacts.

usage: neuron_artifacts.py --source s3://BUCKET/PREFIX --weights DIR --manifest-sha256 HEX --key FILE
                           --compiled DIR --engines N --s5cmd PATH [--textfile-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

try:  # on the node: the verifier and the prefetch beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import prefetch_weights as pw
    import verify_weights as vw
except ImportError:  # in the library (tests)
    from inference_infra.components.aws.node import prefetch_weights as pw
    from inference_infra.components.models import verify_weights as vw
finally:
    sys.path.pop(0)

GAUGE = "inference_neuron_compile_on_node"
KEY_FILE = "neuron-compile-key.json"
PRECOMPILED = "precompiled"


def log(message: str) -> None:
    sys.stderr.write(f"neuron artifacts: {message}\n")
    sys.stderr.flush()


def gauge(textfile_dir: str, compiled: str, on_node: bool) -> None:
    """1 when the engines compile on this node, 0 when they load the verified precompiled set."""
    if not textfile_dir or not os.path.isdir(textfile_dir):
        return
    target = os.path.join(textfile_dir, "inference_neuron_compile.prom")
    label = compiled.replace("\\", "\\\\").replace('"', '\\"')
    with open(target + ".tmp", "w") as f:
        f.write(f"# HELP {GAUGE} 1 when the Neuron engines compile on this node (no precompiled set).\n")
        f.write(f'# TYPE {GAUGE} gauge\n{GAUGE}{{directory="{label}"}} {int(on_node)}\n')
    os.replace(target + ".tmp", target)


def copy_file(source: str, target: str) -> None:
    """Copy with copy_file_range (a reflink on XFS), else shutil."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(source, "rb") as src, open(target, "wb") as dst:
        try:
            left = os.fstat(src.fileno()).st_size
            while left > 0:
                sent = os.copy_file_range(src.fileno(), dst.fileno(), left)
                if sent == 0:
                    break
                left -= sent
            if left == 0:
                return
        except (AttributeError, OSError):
            pass
        src.seek(0)
        dst.seek(0)
        dst.truncate()
        shutil.copyfileobj(src, dst, 8 * 1024 * 1024)


def place(verified: str, folder: str, digest: str) -> bool:
    """The verified set into an engine's folder; False when it was there already."""
    if vw.read_marker(folder) == digest:
        return False
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    entries, _ = vw.read_manifest(os.path.join(verified, vw.MANIFEST_NAME), digest)
    for entry in entries:
        parts = entry["path"].split("/")
        copy_file(os.path.join(verified, *parts), os.path.join(folder, *parts))
    vw.write_marker(folder, digest)
    return True


def fetch(args: argparse.Namespace, entry: dict) -> tuple[str, list[str]]:
    """Step 3: the set's files under <compiled>/precompiled, verified; (its folder, problems)."""
    key_id = vw.compile_key_id(entry["key"])
    source = f"{args.source.rstrip('/')}/{vw.COMPILED_FOLDER}/{key_id}"
    dest = os.path.join(args.compiled, PRECOMPILED)
    expected = entry["sha256"].lower()
    if vw.read_marker(dest) == expected:
        problems = vw.verify(dest, os.path.join(dest, vw.MANIFEST_NAME), expected, allow_code=True)
    else:
        if os.path.isdir(dest):
            vw.remove_marker(dest)
        problems = pw.download(source, dest, expected, args.s5cmd)[1]
        if not problems:
            problems = vw.verify(dest, os.path.join(dest, vw.MANIFEST_NAME), expected, allow_code=True)
    if not problems:
        entries, problems = vw.read_manifest(os.path.join(dest, vw.MANIFEST_NAME), expected)
        problems += [f"{e['path']}: {w}" for e in entries if (w := vw.artifact_format_problem(e["path"]))]
    if args.textfile_dir and os.path.isdir(args.textfile_dir):
        vw.write_gauge(args.textfile_dir, dest, bool(problems))
    if problems:
        shutil.rmtree(dest, ignore_errors=True)
    else:
        vw.write_marker(dest, expected)
    return dest, problems


def run(args: argparse.Namespace) -> int:
    with open(args.key) as f:
        key = json.load(f)
    key_id = vw.compile_key_id(key)
    manifest = os.path.join(args.weights, vw.MANIFEST_NAME)
    entries, problems = vw.read_manifest(manifest, args.manifest_sha256)
    document = {}
    if not problems:
        with open(manifest, "rb") as f:
            document = json.load(f)
    os.makedirs(args.compiled, exist_ok=True)
    record = {"key": key, "weights": vw.weights_digest(entries)}
    with open(os.path.join(args.compiled, KEY_FILE), "w") as f:
        f.write(json.dumps(record, indent=2, sort_keys=True) + "\n")
    entry = vw.compiled_entry(document, key) if not problems else None
    if entry is None:
        why = (
            "; ".join(problems)
            or f"the pinned weights manifest indexes no artifacts for compile key {key_id}"
        )
        log(
            f"{why}: each engine compiles on this node (minutes). Publish this node's compile with "
            f"`inference-infra models compile-manifest` (key: {os.path.join(args.compiled, KEY_FILE)})"
        )
        gauge(args.textfile_dir, args.compiled, True)
        return 0
    verified, problems = fetch(args, entry)
    if problems:
        for problem in problems:
            log(f"refused precompiled artifacts {key_id}: {problem}")
        log("the engines compile on this node instead, from the verified weights")
        gauge(args.textfile_dir, args.compiled, True)
        return 0
    placed = [
        i
        for i in range(args.engines)
        if place(verified, os.path.join(args.compiled, str(i)), entry["sha256"])
    ]
    log(f"precompiled artifacts {key_id} verified; placed for engine(s) {placed or 'none (already there)'}")
    gauge(args.textfile_dir, args.compiled, False)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="neuron_artifacts.py", description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="s3://bucket/prefix of the weights")
    parser.add_argument("--weights", required=True, help="the verified weights directory")
    parser.add_argument("--manifest-sha256", required=True, help="the weights manifest's pinned SHA-256")
    parser.add_argument("--key", required=True, help="this node's compile key (JSON file)")
    parser.add_argument("--compiled", required=True, help="the folder of this key's compiled artifacts")
    parser.add_argument("--engines", required=True, type=int, help="engines on this node")
    parser.add_argument("--s5cmd", required=True, help="the pinned s5cmd")
    parser.add_argument("--textfile-dir", default="", help="the node exporter's textfile folder")
    args = parser.parse_args(argv)
    if not vw.is_sha256(args.manifest_sha256) or not args.source.startswith("s3://") or args.engines < 1:
        parser.error("--manifest-sha256 must be 64 hex digits, --source an s3:// URI, --engines 1 or more")
    args.manifest_sha256 = args.manifest_sha256.lower()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
