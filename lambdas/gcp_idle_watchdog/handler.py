"""Cloud Run function entry point: read settings, make clients, run once, return the result.

The function is HTTP-triggered (Cloud Scheduler posts to it with an OIDC token; Cloud Run checks
the token and the invoker role before this code runs). A JSON body `{"dry_run": true}` forces a
dry run: a request can only make a run safer.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from typing import Any

from .prices import load_prices
from .settings import Settings
from .watchdog import Clients, run

USER_AGENT = "inference-infra-gcp-idle-watchdog"


TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


def transient(error: BaseException) -> bool:
    """Throttling (429), server errors (5xx) and dropped connections: worth another try."""
    from google.api_core import exceptions
    from googleapiclient.errors import HttpError

    if isinstance(error, exceptions.GoogleAPICallError):
        return error.code in TRANSIENT_STATUS
    if isinstance(error, HttpError):
        return error.status_code in TRANSIENT_STATUS
    return isinstance(error, ConnectionError | TimeoutError)


def default_retry(*, initial: float = 1.0, maximum: float = 32.0, timeout: float = 120.0) -> Any:
    """Exponential backoff with jitter (google-api-core's Retry) around every call of a run."""
    from google.api_core import retry

    return retry.Retry(predicate=transient, initial=initial, maximum=maximum, multiplier=2.0, timeout=timeout)


def make_clients(
    settings: Settings, *, endpoint: str | None = None, credentials: Any = None, retry: Any = None
) -> Clients:
    """REST clients for Compute Engine and Cloud TPU (google-cloud-compute, google-cloud-tpu), Cloud
    Monitoring (google-api-python-client with its bundled discovery document: google-cloud-monitoring
    speaks gRPC only) and, when notifying, Pub/Sub (an authorised requests session).

    `endpoint` points every client at one host (the tests' loopback fake); by default each uses
    Google's own endpoint and the function's service account (Application Default Credentials).
    """
    import google.auth
    from google.api_core.gapic_v1.client_info import ClientInfo
    from google.auth.transport.requests import AuthorizedSession
    from google.cloud import compute_v1, tpu_v2
    from googleapiclient import discovery

    if credentials is None:
        credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    options = {"api_endpoint": endpoint} if endpoint else None
    common: dict[str, Any] = {
        "credentials": credentials,
        "client_options": options,
        "client_info": ClientInfo(user_agent=USER_AGENT),
    }
    monitoring = discovery.build(
        "monitoring",
        "v3",
        credentials=credentials,
        client_options=options,
        static_discovery=True,  # the document shipped with the library: no discovery call at run time
        cache_discovery=False,
    )
    return Clients(
        compute=compute_v1.InstancesClient(transport="rest", **common),
        tpu=tpu_v2.TpuClient(transport="rest", **common),
        monitoring=monitoring,
        retry=retry or default_retry(),
        pubsub=AuthorizedSession(credentials) if settings.pubsub_topic else None,
        **({"pubsub_endpoint": endpoint} if endpoint else {}),
    )


def handler(request: Any) -> dict[str, Any]:
    settings = Settings.from_env(os.environ)
    body = request.get_json(silent=True) if request is not None else None
    if isinstance(body, dict) and body.get("dry_run") is True:
        settings = dataclasses.replace(settings, dry_run=True)  # a request may only make a run safer
    result = run(
        settings,
        make_clients(settings),
        now=datetime.now(UTC),
        prices=load_prices(),
        function_name=os.environ.get("K_SERVICE", "gcp-idle-watchdog"),
    )
    return result.as_dict()
