"""The engines' API key from Secret Manager, written where the engine unit reads it (stdlib, Python 3.9+).

Runs on the node before each engine starts (`ExecStartPre=` of `inference-engine@.service`, in that
unit's sandbox), with the node service account's token from the metadata server:

    python3 gcp_secret.py --secret [projects/P/secrets/]NAME/versions/V KEY_FILE

It reads the secret version (Secret Manager API `versions.access`; without `projects/P/` the node's
own project, from the metadata server) and writes the bare key to KEY_FILE with mode 0400 (the
engine's runtime folder, which systemd makes 0700 and removes when the engine stops); the file is
mounted read-only into the engine's container, whose entrypoint exports it as VLLM_API_KEY to the
server alone (components/serving/units.py). The key never appears in metadata, a unit, a log or the
container's configuration (`docker inspect`).

Exit 0 written; 1 the secret could not be read or is not a usable key (the engine does not start);
2 usage.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
try:  # on the node: the weights fetcher beside this file holds the metadata token client
    from gcs_weights import METADATA_URL, Token
except ImportError:  # imported from the package (tests)
    from inference_infra.components.gcp.node.gcs_weights import METADATA_URL, Token

SECRET_MANAGER_URL = "https://secretmanager.googleapis.com"
PROJECT_PATH = "/computeMetadata/v1/project/project-id"
VARIABLE = "VLLM_API_KEY"  # vLLM reads the key from it when --api-key is not given
_VERSION = re.compile(
    r"^(?:projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/secrets/)?[A-Za-z0-9_-]{1,255}/versions/(?:latest|[1-9][0-9]{0,9})$"
)
# What the key may be: printable ASCII without spaces or quotes (one word of a header and of a file line).
_KEY = re.compile(r"^[!#-&(-~]{16,4096}$")


class SecretError(Exception):
    """The key could not be fetched or used; the message says why (never the key)."""


def project_id(metadata_url: str) -> str:
    request = urllib.request.Request(
        metadata_url.rstrip("/") + PROJECT_PATH, headers={"Metadata-Flavor": "Google"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode().strip()


def access(secret: str, *, metadata_url: str = METADATA_URL, api_url: str = SECRET_MANAGER_URL) -> str:
    """The secret version's payload as text."""
    if not secret.startswith("projects/"):
        secret = f"projects/{project_id(metadata_url)}/secrets/{secret}"
    token = Token(metadata_url).get()
    url = f"{api_url.rstrip('/')}/v1/{urllib.parse.quote(secret, safe='/')}:access"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.load(response)
    except urllib.error.HTTPError as e:
        raise SecretError(f"{secret}: Secret Manager answered HTTP {e.code} {e.reason}") from e
    try:
        return base64.b64decode(body["payload"]["data"]).decode("utf-8")
    except (KeyError, TypeError, ValueError, UnicodeDecodeError) as e:
        raise SecretError(f"{secret}: the answer holds no text payload") from e


def write_key_file(path: str, key: str) -> None:
    """The bare key in a file only its owner reads (created 0400, then renamed into place)."""
    key = key.strip()
    if not _KEY.fullmatch(key):
        raise SecretError(
            "the secret is not a usable API key: 16-4096 printable ASCII characters without spaces or quotes"
        )
    partial = f"{path}.{os.getpid()}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, "w") as f:
        f.write(f"{key}\n")
    os.replace(partial, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gcp_secret.py", description="Write the engines' API key file.")
    parser.add_argument("--secret", required=True, help="[projects/P/secrets/]NAME/versions/V")
    parser.add_argument("--metadata-url", default=METADATA_URL, help=argparse.SUPPRESS)
    parser.add_argument("--api-url", default=SECRET_MANAGER_URL, help=argparse.SUPPRESS)
    parser.add_argument("key_file", help="where the engine unit reads the key (its runtime folder)")
    args = parser.parse_args(argv)
    if not _VERSION.fullmatch(args.secret):
        parser.error(f"--secret {args.secret!r} is not a Secret Manager secret version")
    try:
        write_key_file(
            args.key_file, access(args.secret, metadata_url=args.metadata_url, api_url=args.api_url)
        )
    except (SecretError, OSError, urllib.error.URLError) as e:
        sys.stderr.write(f"gcp_secret.py: the engines' API key was not written: {e}\n")
        return 1
    sys.stderr.write(f"gcp_secret.py: the engines' API key from {args.secret} is in {args.key_file}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
