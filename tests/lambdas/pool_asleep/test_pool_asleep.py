"""The responder answers 503 with Retry-After: until working hours plus the warm-up."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from inference_infra.lambdas.pool_asleep import handler as module
from inference_infra.lambdas.pool_asleep.respond import Hours, response, retry_after_seconds

HOURS = Hours(
    time_zone="Europe/Berlin",
    days=(1, 2, 3, 4, 5),
    start_hour=8,
    end_hour=19,
    warmup_seconds=600,
    pool="dev-llm",
)


def test_retry_after_counts_to_the_next_working_morning_plus_the_warm_up():
    # Friday 2026-11-27 20:00 Berlin (19:00 UTC) -> Monday 08:00 Berlin (07:00 UTC): 60 h
    friday_evening = datetime(2026, 11, 27, 19, 0, tzinfo=UTC)
    assert retry_after_seconds(friday_evening, HOURS) == 60 * 3600 + 600
    # Tuesday 05:30 Berlin -> 08:00 the same day
    assert retry_after_seconds(datetime(2026, 11, 24, 4, 30, tzinfo=UTC), HOURS) == int(2.5 * 3600) + 600


def test_retry_after_follows_the_zones_daylight_saving():
    # Sunday 2026-03-29 (clocks go forward in Berlin at 02:00): Monday 08:00 CEST is 06:00 UTC
    sunday_noon = datetime(2026, 3, 29, 12, 0, tzinfo=UTC)
    assert retry_after_seconds(sunday_noon, HOURS) == 18 * 3600 + 600


def test_retry_after_is_the_warm_up_inside_working_hours():
    assert retry_after_seconds(datetime(2026, 11, 25, 9, 0, tzinfo=UTC), HOURS) == 600


def test_response_is_the_document_an_alb_turns_into_a_503_with_retry_after():
    document = response(datetime(2026, 11, 27, 19, 0, tzinfo=UTC), HOURS)
    assert document["statusCode"] == 503
    assert document["statusDescription"] == "503 Service Unavailable"
    assert document["isBase64Encoded"] is False
    assert document["headers"]["Retry-After"] == str(60 * 3600 + 600)
    assert document["headers"]["Cache-Control"] == "no-store"
    body = json.loads(document["body"])["error"]
    assert body["type"] == "pool_asleep"
    assert body["message"].startswith(
        "dev-llm is scaled to zero outside working hours; it starts at 2026-11-30T08:00"
    )


def test_handler_reads_its_hours_from_the_environment(monkeypatch):
    for key, value in {"TIME_ZONE": "UTC", "DAYS": "0,1,2,3,4,5,6", "START_HOUR": "0", "END_HOUR": "24",
                       "WARMUP_SECONDS": "90", "POOL_NAME": "p"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    document = module.handler({"httpMethod": "POST", "path": "/v1/completions"}, None)
    assert (document["statusCode"], document["headers"]["Retry-After"]) == (503, "90")


def test_hours_rejects_a_broken_environment():
    with pytest.raises(ValueError, match=r"TIME_ZONE='Mars/Olympus'.*DAYS='8'.*START_HOUR='x'"):
        Hours.from_env({"TIME_ZONE": "Mars/Olympus", "DAYS": "8", "START_HOUR": "x", "END_HOUR": "19",
                        "WARMUP_SECONDS": "0"})  # fmt: skip
