"""Test helpers: GcsWeights with pinned manifests (stand-in digests), and the files a boot script writes."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from inference_infra.components.gcp.fleet_common import GcsWeights


def pin(uri: str) -> str:
    """A stand-in manifest digest for a folder: 64 hex digits, different per folder."""
    return hashlib.sha256(uri.rstrip("/").encode()).hexdigest()


def pinned_weights(bucket: str, uris: Sequence[str] = ()) -> GcsWeights:
    return GcsWeights(bucket, tuple(uris), {uri: pin(uri) for uri in uris})


def pins(*uris: str) -> dict[str, str]:
    return {uri: pin(uri) for uri in uris}


_WRITE_FILE = re.compile(r"^\s*write_file (\d{4}) (\S+) '([A-Za-z0-9+/=]*)'$", re.MULTILINE)


def files_of(script: str) -> dict[str, str]:
    """The files a rendered boot script writes: path -> text (decoded from their base64 blobs)."""
    return {
        shlex.split(path)[0]: base64.b64decode(blob).decode() for _, path, blob in _WRITE_FILE.findall(script)
    }


def expanded(script: str) -> str:
    """The script followed by every file it writes: what a node ends up running, as one text."""
    return "\n".join([script, *(f"# file {p}\n{t}" for p, t in files_of(script).items())])


class FakeGcs:
    """Cloud Storage's JSON API media downloads and the metadata server's token, on loopback.

    `objects` maps (bucket, name) -> bytes; `requests` records (name, Range header) in order;
    `failures` maps a name to HTTP statuses answered before it succeeds.
    """

    def __init__(self, objects: dict[tuple[str, str], bytes] | None = None) -> None:
        self.objects = dict(objects or {})
        self.requests: list[tuple[str, str | None]] = []
        self.failures: dict[str, list[int]] = {}
        self.tokens = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path == "/computeMetadata/v1/instance/service-accounts/default/token":
                    if self.headers.get("Metadata-Flavor") != "Google":
                        return self._send(403, b"")
                    fake.tokens += 1
                    return self._send(200, b'{"access_token": "t0k3n", "expires_in": 3599}')
                parts = path.split("/")
                if parts[1:4] != ["storage", "v1", "b"] or parts[5] != "o" or query != "alt=media":
                    return self._send(400, b"")
                if self.headers.get("Authorization") != "Bearer t0k3n":
                    return self._send(401, b"")
                bucket, name = unquote(parts[4]), unquote(parts[6])
                fake.requests.append((name, self.headers.get("Range")))
                if fake.failures.get(name):
                    return self._send(fake.failures[name].pop(0), b"")
                data = fake.objects.get((bucket, name))
                if data is None:
                    return self._send(404, b"")
                if self.headers.get("Range"):
                    first, last = self.headers["Range"].removeprefix("bytes=").split("-")
                    return self._send(206, data[int(first) : int(last) + 1])
                return self._send(200, data)

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGcs:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def publish(
        self, bucket: str, prefix: str, files: dict[str, bytes], *, listed: dict[str, bytes] | None = None
    ) -> str:
        """Put files under prefix with a manifest listing `listed` (default: files); its sha256."""
        for path, data in files.items():
            self.objects[(bucket, f"{prefix}/{path}")] = data
        entries = [
            {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
            for p, d in sorted((listed if listed is not None else files).items())
        ]
        manifest = json.dumps(
            {"algorithm": "sha256", "files": entries, "version": 1}, indent=2, sort_keys=True
        )
        data = (manifest + "\n").encode()
        self.objects[(bucket, f"{prefix}/inference-manifest.json")] = data
        return hashlib.sha256(data).hexdigest()
