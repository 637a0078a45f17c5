#!/usr/bin/env bash
# Copy a model's weights from S3 onto the local model cache with s5cmd (parallel
# multipart downloads), then mark the copy complete. Runs at every boot after
# the cache is mounted; files already present with the same size are skipped.
#
# usage: prefetch-model.sh S3_URI DESTINATION
set -euo pipefail

source_uri="${1%/}"
destination="$2"
s5cmd=/opt/inference-infra/s5cmd/bin/s5cmd
marker="$destination/.prefetch-complete"

mkdir -p "$destination"
rm -f "$marker"
started=$(date +%s)
"$s5cmd" --numworkers "${S5CMD_WORKERS:-64}" --retry-count 10 \
  cp --if-size-differ --concurrency "${S5CMD_CONCURRENCY:-16}" --part-size 64 \
  "$source_uri/*" "$destination/"
elapsed=$(( $(date +%s) - started ))
bytes=$(du -sb "$destination" | cut -f1)
echo "prefetch: $source_uri -> $destination: $bytes bytes in ${elapsed}s" >&2
date -u +%Y-%m-%dT%H:%M:%SZ > "$marker"
