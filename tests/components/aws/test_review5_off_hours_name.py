"""Review 5: OffHours' pool_name, which reaches the responder's and schedules' descriptions and the 503
body, is a short name without line breaks (a 300-character name passed and Lambda's 256-character
description limit would have refused it at deploy)."""

from __future__ import annotations

import pytest

from inference_infra.components.aws import OffHoursArgs
from inference_infra.components.aws.off_hours_args import validate_off_hours
from inference_infra.components.fleet import ScheduleArgs

BERLIN = ScheduleArgs(time_zone="Europe/Berlin", start_hour=8, end_hour=19, off_hours_size=0)


def _problems(pool_name: str) -> list[str]:
    args = OffHoursArgs(group_name="g", schedule=BERLIN, min_size=1, warmup_seconds=540, pool_name=pool_name)
    return [p.input for p in validate_off_hours(args)]


@pytest.mark.parametrize("name", ["chat\nx", "c" * 300, "", " chat", "chat;$(id)", 'say "hi"'])
def test_off_hours_rejects_pool_names_that_are_not_short_names(name):
    assert _problems(name) == ["pool_name"]


@pytest.mark.parametrize("name", ["chat", "the pool", "llama-8b.eu_1"])
def test_off_hours_accepts_pool_names_and_the_default(name):
    assert _problems(name) == []
