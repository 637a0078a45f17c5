#!/usr/bin/env bash
# Fetch the engines' API key at engine start into the file the engine's container mounts read-only:
# the bare key on one line, mode 0400, in the engine unit's runtime folder (removed when it stops). The
# container's entrypoint exports it as VLLM_API_KEY to the server alone (components/serving/units.py),
# so it is in no `docker inspect` output and no command line.
# The key lives in SSM Parameter Store (SecureString) or Secrets Manager; it is never in user data,
# instance metadata or a unit file.
#
# usage: engine-api-key.sh ssm|secretsmanager NAME_OR_ARN REGION OUTPUT_FILE
set -euo pipefail

if [ "$#" -ne 4 ]; then
  echo "usage: engine-api-key.sh ssm|secretsmanager NAME_OR_ARN REGION OUTPUT_FILE" >&2
  exit 2
fi
kind="$1"
id="$2"
region="$3"
output="$4"
umask 277

case "$kind" in
  ssm)
    key=$(aws ssm get-parameter --region "$region" --name "$id" --with-decryption \
      --query Parameter.Value --output text) ;;
  secretsmanager)
    key=$(aws secretsmanager get-secret-value --region "$region" --secret-id "$id" \
      --query SecretString --output text) ;;
  *)
    echo "engine-api-key: unknown source '$kind' (ssm or secretsmanager)" >&2
    exit 2 ;;
esac

# One word of printable characters: what an Authorization header carries.
if [ "${#key}" -lt 16 ] || [[ "$key" == *[![:graph:]]* ]]; then
  echo "engine-api-key: the key in $kind $id must be 16 or more printable characters, no spaces" >&2
  exit 1
fi
partial="$output.$$"
printf '%s\n' "$key" >"$partial"
mv "$partial" "$output"
