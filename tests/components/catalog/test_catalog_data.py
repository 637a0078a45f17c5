"""The catalog's data files: sourced and dated rows, pinned inputs, a rebuild that changes nothing."""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import re
import shutil
import tomllib
from datetime import date
from pathlib import Path

import pytest

from inference_infra.components.catalog import build
from inference_infra.components.catalog.aws import AWS_INSTANCE_TYPES
from inference_infra.components.catalog.gcp import GCP_INSTANCE_TYPES
from inference_infra.components.catalog.tables import DATA

REPO = Path(__file__).resolve().parents[3]
LATEST = date(2026, 12, 2)  # the newest figure in the tables; none may claim to be newer
URL = re.compile(r"https://\S+")


def _csv_files() -> list[Path]:
    return sorted(p for p in DATA.rglob("*.csv") if p.parent.name != "sources")


def test_catalog_build_rebuilding_from_the_recorded_inputs_changes_nothing():
    for name, text in build.build().items():
        assert (build.GENERATED / name).read_text() == text, f"data/generated/{name}: run `make catalog`"
    assert build.main(["--check"]) == 0


def test_catalog_build_rejects_an_input_whose_sha256_differs(tmp_path, monkeypatch):
    shutil.copytree(build.SOURCES, tmp_path, dirs_exist_ok=True)
    copy = tmp_path / build.AWS_INPUT
    copy.write_text(copy.read_text().replace("0.526", "0.527", 1))
    monkeypatch.setattr(build, "SOURCES", tmp_path)
    with pytest.raises(build.BuildError, match=r"SHA-256 .* differs"):
        build.build()


def test_catalog_sources_record_url_commit_filter_and_sha256():
    recorded = build.sources()
    assert set(recorded) == {p.name for p in build.SOURCES.iterdir()} - {"SOURCES.json"}
    for name, meta in recorded.items():
        assert meta["url"] == f"{meta['repository']}/blob/{meta['commit']}/{meta['path']}"
        assert re.fullmatch(r"[0-9a-f]{40}", meta["commit"])
        assert meta["sha256"] == build.sha256(build.SOURCES / name)
        assert meta["original_sha256"] or meta["original_sha256_note"]  # or why it could not be taken
        if name in (build.GCE_INPUT, build.SAGEMAKER_INPUT):  # YAML copies
            continue
        with (build.SOURCES / name).open(newline="") as f:
            reader = csv.DictReader(f)
            assert reader.fieldnames == meta["filter"]["columns"]
            assert sum(1 for _ in reader) == meta["rows"]


def test_catalog_sources_pricing_copy_holds_the_filtered_machines_regions_and_date():
    meta = build.sources()[build.GCE_INPUT]
    pricing = build.read_pricing()
    machines = pricing["compute"]["instance"]
    assert list(machines) == sorted(meta["filter"]["instance_types"])  # the original's (sorted) order
    assert sum(len(m["cost"]) for m in machines.values()) == meta["machine_regions"]
    assert {r for m in machines.values() for r in m["cost"]} <= set(meta["filter"]["regions"])
    assert set(pricing["compute"]["storage"]) == set(meta["filter"]["storage"])
    assert pricing["about"]["generated"] == meta["generated"]
    assert re.fullmatch(r"[0-9a-f]{64}", meta["original_sha256"])


def test_catalog_build_filter_cuts_the_pricing_copy_out_of_an_original(tmp_path):
    """pricing.yml with other machines, regions, storage kinds and sections filters back to the copy."""
    copy = (build.SOURCES / build.GCE_INPUT).read_text()
    region = "        europe-west4:\n          hour: 1.5\n          month: 1095.0\n"
    machine = "    a2-aaa-1g:\n      a100: 1\n      cost:\n" + region + "      cpu: 12\n"
    lines = copy.splitlines(keepends=True)
    at = lines.index("  instance:\n") + 1
    lines.insert(at, machine)  # another machine type, before the first kept one
    at = lines.index("        us-central1:\n")
    lines.insert(at, region)  # another region inside a kept machine's cost block
    at = lines.index("  storage:\n") + 1
    lines.insert(at, "    hdd:\n      cost:\n" + region + "      type: pd-standard\n")
    lines.insert(lines.index("  storage:\n"), "  license:\n    win:\n      cost:\n" + region)
    lines.append("monitoring:\n  data:\n    cost:\n      month: 0.258\n")
    original = tmp_path / "pricing.yml"
    original.write_text("".join(lines))
    text, digest = build.filter_original("cyclenerd", original)
    assert text == copy
    assert digest == build.sha256(original)


def test_catalog_build_filter_rejects_a_pricing_line_that_is_not_a_key(tmp_path):
    original = tmp_path / "pricing.yml"
    original.write_text("---\ncompute:\n  instance:\n    - a2-highgpu-1g\n")
    with pytest.raises(build.BuildError, match="line 4 is not a key"):
        build.filter_original("cyclenerd", original)


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_catalog_build_filter_cuts_the_committed_copy_out_of_an_original(cloud, tmp_path):
    """An original (all columns, other types and regions) filters back to the committed copy."""
    name = build.AWS_INPUT if cloud == "aws" else build.GCP_INPUT
    meta = build.sources()[name]
    with (build.SOURCES / name).open(newline="") as f:
        kept = list(csv.DictReader(f))
    other = {**kept[0], "InstanceType": "m5.large" if cloud == "aws" else "n2-standard-4"}
    elsewhere = {**kept[-1], "Region": "eu-west-1"}
    rows = [other, *kept[:3], elsewhere, *kept[3:], other]
    original = tmp_path / "vms.csv"
    with original.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=meta["original_columns"], lineterminator="\n")
        writer.writeheader()
        extra = {"GpuInfo": "{'Gpus': [{'Name': 'X', 'Count': 1}]}", "Arch": "x86_64"}  # commas, quotes
        for row in rows:
            writer.writerow({**row, **{k: v for k, v in extra.items() if k in meta["original_columns"]}})
    text, digest = build.filter_original(cloud, original)
    assert text == (build.SOURCES / name).read_text()
    assert digest == build.sha256(original)


@pytest.mark.parametrize("path", _csv_files(), ids=lambda p: str(p.relative_to(DATA)))
def test_catalog_data_rows_carry_a_source_and_a_date(path):
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        if row.get("not_priced"):  # a SageMaker type not priced has no source of its own: it says why
            assert "not in FMBench's pricing.yml" in row["not_priced"], row
            continue
        for part in row["source"].split(" ; "):
            assert URL.match(part), (path.name, row)  # a URL, perhaps followed by what it shows
        assert date(2023, 1, 1) <= date.fromisoformat(row["as_of"]) <= LATEST, (path.name, row)


def test_catalog_data_ec2_families_carry_a_source_and_a_date():
    for family in json.loads((DATA / "ec2_families.json").read_text()):
        assert all(URL.fullmatch(part) for part in family["source"].split(" ; ")), family["family"]
        assert date.fromisoformat(family["as_of"]) <= LATEST


def test_catalog_data_prices_every_aws_type_from_the_source_but_the_capacity_block_one():
    generated = csv.DictReader(io.StringIO(build.build()["aws_prices.csv"]))
    from_source = {(r["name"], r["region"]) for r in generated}
    for item in AWS_INSTANCE_TYPES:
        listed = {(item.name, region) for region in item.hourly_usd}
        assert (listed <= from_source) is not item.capacity_blocks_only, item.name
        assert list(item.hourly_usd) == ["us-east-1", "us-west-2"], item.name


def test_catalog_data_prices_gcp_types_from_the_sources_but_the_rows_kept_by_hand():
    rows = csv.DictReader(io.StringIO(build.build()["gcp_prices.csv"]))
    generated = {(r["name"], r["region"]) for r in rows}
    by_hand = {(r["name"], r["region"]) for r in build._read("prices.csv") if r["cloud"] == "gcp"}
    assert by_hand == {("a3-megagpu-8g", "us-central1")}  # the pinned pricing.yml has no figure there
    for item in GCP_INSTANCE_TYPES:
        assert {(item.name, region) for region in item.hourly_usd} <= generated | by_hand, item.name
        assert any((item.name, region) in generated for region in item.hourly_usd), item.name


def test_catalog_build_gcp_machine_price_is_the_composed_list_price():
    rows = {(r["name"], r["region"]): r for r in csv.DictReader(io.StringIO(build.build()["gcp_prices.csv"]))}
    a3 = rows[("a3-highgpu-1g", "us-central1")]  # Cyclenerd: 11.0612499878219 with 750 GiB at $0.08/GiB-month
    assert a3["hourly_usd"] == "11.06125"
    assert a3["as_of"] == "2026-07-30"
    assert a3["notes"] == "26 vCPUs, 234 GB, 1 x h100-80gb $10.979058/h + 750 GiB local SSD $0.082192/h"
    assert rows[("v5p-8", "us-east5")]["notes"] == "4 chips x $4.2/chip-hour"


def test_catalog_build_rejects_tpu_slices_that_disagree_on_the_chip_rate(monkeypatch):
    rows = build.read_input(build.GCP_INPUT)
    for row in rows:
        if row["AcceleratorName"] == "tpu-v6e-8" and row["Region"] == "us-east1":
            row["Price"] = "22.0"
    monkeypatch.setattr(build, "read_input", lambda name: rows)
    with pytest.raises(build.BuildError, match=r"tpu-v6e in us-east1: slices list different per-chip rates"):
        build._gcp_tpu_prices(build._read("instance_types.csv"), set())


def test_catalog_data_files_ship_in_the_wheel():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["*"]
    for path in DATA.rglob("*"):
        if path.is_file():
            assert any(fnmatch.fnmatch(path.name, p) for p in patterns), f"{path} is not in package-data"
