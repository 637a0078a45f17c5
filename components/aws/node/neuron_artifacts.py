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


def gauge(textfile_dir: str, on_node: bool) -> None:
    """1 when the engines compile on this node, 0 when they load the verified precompiled set."""
    if os.path.isdir(textfile_dir):
        target = os.path.join(textfile_dir, "inference_neuron_compile.prom")
        with open(target + ".tmp", "w") as f:
            f.write(f"# TYPE {GAUGE} gauge\n{GAUGE} {int(on_node)}\n")
        os.replace(target + ".tmp", target)


def place(verified: str, folder: str, entries: list, digest: str) -> bool:
    """The verified set into an engine's folder (unless its marker says it is there); a plain copy, so
    an engine that recompiles into its folder never writes the verified set."""
    if vw.read_marker(folder) == digest:
        return False
    shutil.rmtree(folder, ignore_errors=True)
    for entry in entries:
        target = os.path.join(folder, *entry["path"].split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(verified, *entry["path"].split("/")), target)
    vw.write_marker(folder, digest)
    return True


def fetch(args: argparse.Namespace, entry: dict) -> tuple[str, list, list]:
    """Step 3: the set under <compiled>/precompiled, verified: (its folder, its files, the problems)."""
    dest = os.path.join(args.compiled, PRECOMPILED)
    manifest = os.path.join(dest, vw.MANIFEST_NAME)
    digest = entry["sha256"].lower()
    problems = []
    if vw.read_marker(dest) != digest:
        vw.remove_marker(dest) if os.path.isdir(dest) else None
        source = f"{args.source.rstrip('/')}/{vw.COMPILED_FOLDER}/{vw.compile_key_id(entry['key'])}"
        problems = pw.download(source, dest, digest, args.s5cmd)[1]
    problems = problems or vw.verify(dest, manifest, digest, allow_code=True)
    entries, found = vw.read_manifest(manifest, digest)
    problems = problems or found + [
        f"{e['path']}: {vw.artifact_format_problem(e['path'])}"
        for e in entries
        if vw.artifact_format_problem(e["path"])
    ]
    vw.write_gauge(args.textfile_dir, dest, bool(problems)) if os.path.isdir(args.textfile_dir) else None
    if problems:
        shutil.rmtree(dest, ignore_errors=True)
    else:
        vw.write_marker(dest, digest)
    return dest, entries, problems


def run(args: argparse.Namespace) -> int:
    with open(args.key) as f:
        key = json.load(f)
    manifest = os.path.join(args.weights, vw.MANIFEST_NAME)
    entries, problems = vw.read_manifest(manifest, args.manifest_sha256)
    document = {}
    if not problems:
        with open(manifest, "rb") as f:
            document = json.load(f)
    os.makedirs(args.compiled, exist_ok=True)
    with open(os.path.join(args.compiled, KEY_FILE), "w") as f:
        json.dump({"key": key, "weights": vw.weights_digest(entries)}, f, indent=1, sort_keys=True)
    entry = vw.compiled_entry(document, key)
    if entry is not None:
        verified, files, problems = fetch(args, entry)
        for problem in problems:
            log(f"refused: {problem}")
    if entry is None or problems:
        log(
            f"no verified set for compile key {vw.compile_key_id(key)} in the pinned manifest: the engines "
            f"compile on this node; publish it with `inference-infra models compile-manifest` ({KEY_FILE})"
        )
        gauge(args.textfile_dir, True)
        return 0
    for i in range(args.engines):
        if place(verified, os.path.join(args.compiled, str(i)), files, entry["sha256"]):
            log(f"engine {i}: precompiled set {entry['sha256']} in place")
    gauge(args.textfile_dir, False)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="neuron_artifacts.py", description=__doc__.split("\n")[0])
    for name in (
        "--source",
        "--weights",
        "--manifest-sha256",
        "--key",
        "--compiled",
        "--s5cmd",
        "--textfile-dir",
    ):
        parser.add_argument(name, required=True)
    parser.add_argument("--engines", required=True, type=int)
    args = parser.parse_args(argv)
    if not vw.is_sha256(args.manifest_sha256) or not args.source.startswith("s3://") or args.engines < 1:
        parser.error("--manifest-sha256 must be 64 hex digits, --source an s3:// URI, --engines 1 or more")
    args.manifest_sha256 = args.manifest_sha256.lower()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
