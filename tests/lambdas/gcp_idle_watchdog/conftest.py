"""The loopback fake of Google's APIs (fake_gcp.py, loaded by path: tests are not a package) and the
watchdog's real clients pointed at it, with anonymous credentials and a fast retry."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from inference_infra.lambdas.gcp_idle_watchdog.handler import default_retry, make_clients
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings

FAKE_PATH = Path(__file__).with_name("fake_gcp.py")


def load_fake() -> Any:
    if "fake_gcp" not in sys.modules:
        spec = importlib.util.spec_from_file_location("fake_gcp", FAKE_PATH)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["fake_gcp"] = module
        spec.loader.exec_module(module)
    return sys.modules["fake_gcp"]


@pytest.fixture
def fake_gcp() -> Any:
    return load_fake()


@pytest.fixture
def fake(fake_gcp: Any) -> Iterator[Any]:
    server = fake_gcp.FakeGcp()
    server.url = server.serve()
    yield server
    server.close()


@pytest.fixture
def clients_for(fake: Any):
    def make(settings: Settings) -> Any:
        return make_clients(
            settings,
            endpoint=fake.url,
            credentials=AnonymousCredentials(),
            retry=default_retry(initial=0.01, maximum=0.05, timeout=10),
        )

    return make
