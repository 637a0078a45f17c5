#!/usr/bin/env bash
# Copy a model's weights from S3 onto the local model cache with s5cmd (parallel
# multipart downloads), then verify every file against the manifest stored beside
# the weights (inference-manifest.json: SHA-256 and size of each file, written by
# `inference-infra models manifest`). Only when every file matches is the marker
# .inference-verified written; the serving unit starts only if it exists.
#
# On any failure: one log line naming the file, a failure metric (CloudWatch
# InferenceInfra/ModelVerificationFailed and a node-exporter textfile gauge),
# the marker removed, exit non-zero.
#
# usage: prefetch-model.sh S3_URI DESTINATION
# env:   ALLOW_PICKLE=1 accepts .bin/.pt/.pth/.pkl files (code runs when they load)
set -euo pipefail

source_uri="${1%/}"
destination="$2"
s5cmd="${S5CMD:-/opt/inference-infra/s5cmd/bin/s5cmd}"
manifest_name=inference-manifest.json
marker="$destination/.inference-verified"
textfile_dir="${TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}"

publish() {  # publish <0|1>: the verification outcome as metrics
  local failed="$1"
  if [ -d "$textfile_dir" ]; then
    printf 'inference_model_verification_failed{destination="%s"} %s\n' "$destination" "$failed" \
      >"$textfile_dir/inference_model_verification.prom.$$"
    mv "$textfile_dir/inference_model_verification.prom.$$" "$textfile_dir/inference_model_verification.prom"
  fi
  if command -v aws >/dev/null 2>&1; then
    aws cloudwatch put-metric-data --namespace InferenceInfra --metric-name ModelVerificationFailed \
      --dimensions "Destination=$destination" --value "$failed" >/dev/null 2>&1 || true
  fi
}

fail() {  # fail <file> <reason>: one line naming the file, the metric, no marker, non-zero exit
  echo "weights verification failed: $destination/$1: $2" >&2
  rm -f "$marker"
  publish 1
  exit 1
}

mkdir -p "$destination"
rm -f "$marker" "$destination/.prefetch-complete"
started=$(date +%s)
"$s5cmd" --numworkers "${S5CMD_WORKERS:-64}" --retry-count 10 \
  cp --if-size-differ --concurrency "${S5CMD_CONCURRENCY:-16}" --part-size 64 \
  "$source_uri/*" "$destination/"
# The manifest itself is always fetched again: a size check is not enough for it.
"$s5cmd" --retry-count 10 cp "$source_uri/$manifest_name" "$destination/$manifest_name" \
  || fail "$manifest_name" "missing beside the weights"

[ -s "$destination/$manifest_name" ] || fail "$manifest_name" "missing"

# One "size<TAB>sha256<TAB>path" line per listed file; then every file present must be listed.
if ! entries=$(python3 - "$destination/$manifest_name" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    manifest = json.load(f)
for item in manifest["files"]:
    path = str(item["path"])
    if path.startswith("/") or ".." in path.split("/") or "\t" in path or "\n" in path:
        raise SystemExit(f"bad path {path!r}")
    print(f"{int(item['size'])}\t{item['sha256']}\t{path}")
PY
); then
  fail "$manifest_name" "unreadable"
fi

declare -A listed=()
while IFS=$'\t' read -r size sha path; do
  [ -n "$path" ] || continue
  listed["$path"]=1
  case "${path,,}" in
    *.bin|*.pt|*.pth|*.pkl)
      [ "${ALLOW_PICKLE:-0}" = 1 ] || fail "$path" "pickle format refused (set allow_pickle on the fleet)" ;;
  esac
  file="$destination/$path"
  [ -f "$file" ] || fail "$path" "missing"
  [ "$(stat -c %s "$file")" = "$size" ] || fail "$path" "size differs from the manifest"
  actual=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$actual" = "$sha" ] || fail "$path" "sha256 $actual differs from the manifest"
done <<<"$entries"

while IFS= read -r -d '' file; do
  path="${file#"$destination"/}"
  case "$path" in
    "$manifest_name"|.inference-verified|.prefetch-complete) continue ;;
  esac
  [ -n "${listed[$path]:-}" ] || fail "$path" "not in the manifest"
done < <(find "$destination" -type f -print0)

elapsed=$(( $(date +%s) - started ))
bytes=$(du -sb "$destination" | cut -f1)
echo "prefetch: $source_uri -> $destination: $bytes bytes in ${elapsed}s, ${#listed[@]} file(s) verified" >&2
publish 0
date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
