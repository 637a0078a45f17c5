"""The metrics-only port of one engine: GET /metrics relayed from the engine's API port, nothing else.

vLLM serves Prometheus metrics on its API port, outside its API-key check (which covers /v1 paths
only). The API port is reached by the load balancer alone; Prometheus scrapes this proxy instead,
on a port of its own (the engine's port + 1000), which answers GET /metrics and refuses every other
path and method. When the engine does not answer, the proxy answers 503, so the scrape fails and
`up` is 0 as if Prometheus had scraped the engine itself.

Runs on the node as it is (python3 3.9+, standard library only), under systemd with a dynamic user:

    python3 engine_metrics_proxy.py --listen 9000 --upstream 8000
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BYTES = 64 * 1024 * 1024  # a scrape larger than this is refused rather than buffered
TIMEOUT_SECONDS = 10


def make_handler(upstream_port: int, upstream_host: str = "127.0.0.1") -> type:
    class Handler(BaseHTTPRequestHandler):
        server_version = "inference-infra-metrics"
        sys_version = ""

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self._reply(404, b"only /metrics is served here\n")
                return
            url = f"http://{upstream_host}:{upstream_port}/metrics"
            try:
                with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
                    body = response.read(MAX_BYTES + 1)
                    kind = response.headers.get("Content-Type", "text/plain; version=0.0.4")
            except (OSError, urllib.error.URLError):
                self._reply(503, b"the engine does not answer\n")
                return
            if len(body) > MAX_BYTES:
                self._reply(502, b"the engine's metrics are too large\n")
                return
            self._reply(200, body, kind)

        def _refuse(self) -> None:
            self._reply(405, b"only GET /metrics is served here\n")

        do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse  # noqa: N815

        def _reply(self, status: int, body: bytes, kind: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # a scrape every 15 s per engine would fill the journal

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve GET /metrics of one engine on a port of its own.")
    parser.add_argument("--listen", type=int, required=True, help="the metrics-only port")
    parser.add_argument("--upstream", type=int, required=True, help="the engine's API port on 127.0.0.1")
    parser.add_argument("--bind", default="0.0.0.0", help="the address to listen on")
    args = parser.parse_args(argv)
    for name in ("listen", "upstream"):
        if not 1 <= getattr(args, name) <= 65535:
            parser.error(f"--{name} must be a port number 1..65535")
    server = ThreadingHTTPServer((args.bind, args.listen), make_handler(args.upstream))
    server.daemon_threads = True
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
