"""GCP naming rules and the service account ids derived from component names."""

from __future__ import annotations

import re

import pytest

from inference_infra.components.gcp.names import label_problems, model_uri_problems, name_problems, region_of
from inference_infra.components.gcp.service_account import account_id

_ACCOUNT_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")


@pytest.mark.parametrize(
    "name", ["l4", "a", "llama70b-h100", "x" * 40, "a-very-long-fleet-name-for-the-70b-model"]
)
def test_account_id_is_always_valid(name):
    assert _ACCOUNT_ID.match(account_id(name)), account_id(name)


def test_account_id_keeps_long_names_apart():
    first = account_id("serving-fleet-for-llama-70b-instruct-a")
    second = account_id("serving-fleet-for-llama-70b-instruct-b")
    assert first != second
    assert len(first) <= 30


def test_account_id_is_readable_for_ordinary_names():
    assert account_id("small-l4") == "small-l4-sa"
    assert account_id("t") == "t-node-sa"


@pytest.mark.parametrize("bad", ["Fleet", "1fleet", "fleet-", "fl_eet", "x" * 41])
def test_name_problems_rejects_names_compute_engine_refuses(bad):
    (problem,) = name_problems("name", bad)
    assert "must be a Compute Engine name" in str(problem)


def test_label_problems_names_the_bad_key_and_value():
    problems = label_problems("labels", {"Team": "ml", "owner": "ML Team"})
    assert [p.input for p in problems] == ["labels key", "labels['owner']"]


def test_model_uri_problems_accept_folders_in_the_bucket():
    assert model_uri_problems("models", ("gs://bkt/llama", "gs://bkt/org/mistral/"), "bkt") == []


def test_region_of_zone():
    assert region_of("europe-west4-b") == "europe-west4"
