"""The advisory table beside the image pins: its rows, which pins fall inside, and acceptances."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from packaging.specifiers import SpecifierSet

from inference_infra.components.advisories import (
    ACCEPTED,
    ADVISORIES,
    ENGINE_VERSIONS,
    acceptance,
    affecting,
    engine_pin,
    engine_version,
)
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.images import VLLM_NEURON, VLLM_OPENAI, VLLM_TPU
from inference_infra.components.serving.engines import IMAGES, engine_family

TODAY = date(2026, 12, 2)


def test_advisories_rows_are_sourced_dated_and_parse():
    ids = [a.id for a in ADVISORIES]
    assert len(ids) == len(set(ids))
    for advisory in ADVISORIES:
        assert advisory.source
        assert advisory.summary
        assert advisory.published <= TODAY
        assert SpecifierSet(advisory.affected)  # PEP 440, parsed
        assert not advisory.covers("99.0.0")  # every range has an upper bound: a fix exists


def test_advisories_engine_versions_agree_with_the_serving_engines():
    # components.serving.engines names the version each family's pin carries; the table reads the same.
    for family in AcceleratorFamily:
        engine = IMAGES[engine_family(family)]
        assert engine_pin(family) is engine.image
        assert ENGINE_VERSIONS[engine.digest] == engine.engine_version


def test_advisories_the_neuron_pin_falls_inside_the_key_bypass_and_the_dos():
    inside = {a.id for a in affecting(VLLM_NEURON)}
    assert {"GHSA-94f4-hr76-p5j6", "GHSA-69j4-grxj-j64p"} <= inside
    bypass = next(a for a in ADVISORIES if a.id == "GHSA-94f4-hr76-p5j6")
    assert acceptance(bypass, VLLM_NEURON, TODAY) is None  # never accepted: no key needed


@pytest.mark.parametrize(
    ("version", "inside"),
    [("0.21.9", True), ("0.22.0", False), ("0.22.0rc1", True), ("0.9.1", True), ("1.0.0", False)],
)
def test_advisories_covers_reads_pep440_ranges_with_prereleases(version, inside):
    bypass = next(a for a in ADVISORIES if a.id == "GHSA-94f4-hr76-p5j6")
    assert bypass.covers(version) is inside


def test_advisories_rejects_an_unreadable_version_as_inside():
    # A version that cannot be read is not known to be outside any range.
    assert all(a.covers("nightly") for a in ADVISORIES)


def test_advisories_acceptances_expire_and_name_a_reason():
    for accepted in ACCEPTED:
        assert accepted.reason
        assert accepted.until > TODAY
        advisory = next(a for a in ADVISORIES if a.id == accepted.advisory)
        assert advisory.needs_key
    pin = VLLM_OPENAI
    (advisory, *_) = [a for a in affecting(pin) if acceptance(a, pin, TODAY) is not None]
    assert acceptance(advisory, pin, date(2027, 1, 16)) is None  # after its date: refused again
    keyless = replace(advisory, needs_key=False)
    assert acceptance(keyless, pin, TODAY) is None


def test_advisories_a_pin_the_table_does_not_know_is_inside_none():
    unknown = replace(VLLM_TPU, digest="sha256:" + "0" * 64)
    assert engine_version(unknown) is None
    assert affecting(unknown) == []
