"""Rebuild the catalog rows that come from SkyPilot's catalogs (``make catalog``; by hand, not in CI).

Reads only the committed copies in ``data/sources/`` (``SOURCES.json`` names each one's URL, commit,
filter and SHA-256, and the build stops when a copy's SHA-256 differs) and the hand-kept tables that
say which types the catalog has (``instance_types.csv``, ``gcp_n1.csv``, ``spot.csv``). It writes:

* ``data/generated/aws_prices.csv``: the on-demand USD per hour of every AWS accelerator type, per
  region (the ``Price`` of its ordinary zones, which agree). A type the source lists without a price
  (p5e.48xlarge, sold through Capacity Blocks only) is left to ``prices.csv``.
* ``data/generated/spot.csv``: the spot USD per hour of every catalog type in every region of the
  copy that lists one. AWS: one figure per ordinary availability zone (Local Zones such as
  use1-atl2-az1 left out: a fleet in us-east-1 lands in its ordinary zones). GCP: a GPU machine is
  its VM row plus the GPU row of its GPU count (Google bills them apart), N1 VMs and T4 guest GPUs
  on their own rows, TPU slices from their ``tpu-<slice>`` rows (SkyPilot's 700.0 placeholder for
  an unpriced slice left out); a region's zones agree, so a region carries one figure. A row of the
  hand-kept ``spot.csv`` (a primary source kept over SkyPilot's) is not generated.

GCP on-demand prices are not rebuilt: SkyPilot's GCP accelerator rows disagree with Google's price
pages (see the catalog README), so they stay hand-kept in ``prices.csv``.

    python -m inference_infra.components.catalog.build            # rewrite data/generated/
    python -m inference_infra.components.catalog.build --check    # exit 1 if a rebuild would change them
    python -m inference_infra.components.catalog.build filter aws vms.csv > copy.csv   # from an original
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
SOURCES = DATA / "sources"
GENERATED = DATA / "generated"

PRICE_COLUMNS = ("cloud", "name", "region", "hourly_usd", "source", "as_of", "notes")
SPOT_COLUMNS = ("cloud", "name", "region", "zones", "zone_usd", "source", "as_of", "notes")

AWS_INPUT = "skypilot-aws-vms.csv"
GCP_INPUT = "skypilot-gcp-vms.csv"

# The catalog's accelerator key -> the AcceleratorName of SkyPilot's GCP accelerator rows.
GCP_GPU_NAMES: Mapping[str, str] = {
    "l4": "L4",
    "t4": "T4",
    "a100-40gb": "A100",
    "a100-80gb": "A100-80GB",
    "h100-80gb": "H100",
    "h100-mega-80gb": "H100-MEGA",
}
_PLACEHOLDER_USD = 700.0  # SkyPilot's price for a TPU slice it has no price for (on-demand and spot)
_ORDINARY_AWS_ZONE = re.compile(r"[a-z]+[0-9]+-az[0-9]+")  # use1-az1; a Local Zone is use1-atl2-az1


class BuildError(RuntimeError):
    """An input that is not what SOURCES.json records, or rows the rules cannot combine."""


def sources() -> dict[str, dict]:
    return json.loads((SOURCES / "SOURCES.json").read_text())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_input(name: str) -> list[dict[str, str]]:
    """The committed copy's rows, after checking its SHA-256 against SOURCES.json."""
    path = SOURCES / name
    recorded = sources()[name]["sha256"]
    if (actual := sha256(path)) != recorded:
        raise BuildError(f"{path}: SHA-256 {actual} differs from the {recorded} SOURCES.json records")
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _read(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _fmt(value: float) -> str:
    return repr(round(value, 6))


def _csv(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def _keyed(rows: list[dict[str, str]], *fields: str) -> dict[tuple[str, ...], list[dict[str, str]]]:
    out: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        out.setdefault(tuple(row[f] for f in fields), []).append(row)
    return out


# --- AWS -----------------------------------------------------------------------------------------


def _aws_rows(catalog: list[dict[str, str]], hand_spot: set[tuple[str, str, str]]):
    meta = sources()[AWS_INPUT]
    by_type_region = _keyed(read_input(AWS_INPUT), "InstanceType", "Region")
    prices, spot = [], []
    for item in (r for r in catalog if r["cloud"] == "aws"):
        name = item["name"]
        for region in meta["filter"]["regions"]:
            rows = [
                r
                for r in by_type_region.get((name, region), [])
                if _ORDINARY_AWS_ZONE.fullmatch(r["AvailabilityZone"])
            ]
            listed = {float(r["Price"]) for r in rows if r["Price"]}
            if len(listed) > 1:
                raise BuildError(f"{name} in {region}: zones list on-demand prices {sorted(listed)}")
            if listed:
                prices.append(("aws", name, region, _fmt(listed.pop()), meta["url"], meta["copied_on"], ""))
            zoned = [r for r in rows if r["SpotPrice"]]
            if zoned and ("aws", name, region) not in hand_spot:
                zones = " ".join(r["AvailabilityZone"] for r in zoned)
                figures = " ".join(_fmt(float(r["SpotPrice"])) for r in zoned)
                spot.append(("aws", name, region, zones, figures, meta["url"], meta["copied_on"], ""))
    return prices, spot


# --- GCP -----------------------------------------------------------------------------------------


def _region_figure(zone_usd: Mapping[str, float], what: str) -> float:
    """GCP prices spot per region: one figure, or an error naming the zones that disagree."""
    figures = set(zone_usd.values())
    if len(figures) != 1:
        raise BuildError(f"{what}: zones list different spot prices {dict(zone_usd)}")
    return figures.pop()


def _spot_by_zone(rows: list[dict[str, str]]) -> dict[str, float]:
    return {
        r["AvailabilityZone"]: float(r["SpotPrice"])
        for r in rows
        if r["SpotPrice"] and float(r["SpotPrice"]) != _PLACEHOLDER_USD
    }


def _gcp_spot(
    catalog: list[dict[str, str]], n1: list[dict[str, str]], hand_spot: set[tuple[str, str, str]]
) -> list[tuple[str, ...]]:
    meta = sources()[GCP_INPUT]
    rows = read_input(GCP_INPUT)
    vms = _keyed([r for r in rows if r["InstanceType"]], "InstanceType", "Region")
    accelerators = _keyed(
        [r for r in rows if not r["InstanceType"]], "AcceleratorName", "AcceleratorCount", "Region"
    )
    out: list[tuple[str, ...]] = []

    def add(name: str, region: str, usd: float, notes: str = "") -> None:
        if ("gcp", name, region) not in hand_spot:
            out.append(("gcp", name, region, "", _fmt(usd), meta["url"], meta["copied_on"], notes))

    gcp = [r for r in catalog if r["cloud"] == "gcp"]
    for item in (r for r in gcp if not r["tpu_topology"]):
        name, gpus = item["name"], item["accelerator_count"]
        gpu_name = GCP_GPU_NAMES[item["accelerator"]]
        for region in meta["filter"]["regions"]:
            vm = _spot_by_zone(vms.get((name, region), []))
            gpu = _spot_by_zone(accelerators.get((gpu_name, gpus, region), []))
            zones = [z for z in vm if z in gpu]
            if not zones:
                continue
            vm_usd = _region_figure({z: vm[z] for z in zones}, f"{name} VM in {region}")
            gpu_usd = _region_figure({z: gpu[z] for z in zones}, f"{gpus} x {gpu_name} in {region}")
            notes = f"VM ${vm_usd:g}/h + GPUs ({gpus} x {gpu_name}) ${gpu_usd:g}/h"
            add(name, region, vm_usd + gpu_usd, notes)
    for machine in (r for r in n1 if r["kind"] == "machine"):
        for region in meta["filter"]["regions"]:
            if vm := _spot_by_zone(vms.get((machine["name"], region), [])):
                add(machine["name"], region, _region_figure(vm, f"{machine['name']} in {region}"))
    for guest in (r for r in n1 if r["kind"] == "guest"):
        gpu_name = GCP_GPU_NAMES[guest["accelerator"]]
        for region in meta["filter"]["regions"]:
            if gpu := _spot_by_zone(accelerators.get((gpu_name, "1", region), [])):
                add(guest["name"], region, _region_figure(gpu, f"{gpu_name} in {region}"), "per GPU")
    for item in (r for r in gcp if r["tpu_topology"]):
        for region in meta["filter"]["regions"]:
            if tpu := _spot_by_zone(accelerators.get((f"tpu-{item['name']}", "1", region), [])):
                add(item["name"], region, _region_figure(tpu, f"tpu-{item['name']} in {region}"))
    return out


def _unique(rows: list[dict[str, str]], *fields: str) -> list[dict[str, str]]:
    """The first row of each key, in file order (the tables list one row per region)."""
    first: dict[tuple[str, ...], dict[str, str]] = {}
    for row in rows:
        first.setdefault(tuple(row[f] for f in fields), row)
    return list(first.values())


def build() -> dict[str, str]:
    """The generated files' text, from the committed inputs: {file name under generated/: CSV text}."""
    catalog = _read("instance_types.csv")
    n1 = _unique(_read("gcp_n1.csv"), "kind", "name")
    hand_spot = {(r["cloud"], r["name"], r["region"]) for r in _read("spot.csv")}
    prices, aws_spot = _aws_rows(catalog, hand_spot)
    gcp_spot = _gcp_spot(catalog, n1, hand_spot)
    return {
        "aws_prices.csv": _csv(PRICE_COLUMNS, prices),
        "spot.csv": _csv(SPOT_COLUMNS, [*aws_spot, *gcp_spot]),
    }


def filter_original(cloud: str, original: Path) -> tuple[str, str]:
    """(the filtered copy's text, the original's SHA-256) by the filter SOURCES.json records."""
    spec = sources()[AWS_INPUT if cloud == "aws" else GCP_INPUT]["filter"]
    regions, types, names = set(spec["regions"]), set(spec["instance_types"]), set(spec["accelerator_names"])

    def keep(row: Mapping[str, str]) -> bool:
        listed = row["InstanceType"] in types or (not row["InstanceType"] and row["AcceleratorName"] in names)
        return row["Region"] in regions and listed

    with original.open(newline="") as f:
        kept = [[row[c] for c in spec["columns"]] for row in csv.DictReader(f) if keep(row)]
    return _csv(spec["columns"], kept), sha256(original)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inference_infra.components.catalog.build")
    parser.add_argument("--check", action="store_true", help="exit 1 if a rebuild would change a file")
    sub = parser.add_subparsers(dest="command")
    cut = sub.add_parser("filter", help="print the filtered copy of an original SkyPilot vms.csv")
    cut.add_argument("cloud", choices=("aws", "gcp"))
    cut.add_argument("original", type=Path)
    args = parser.parse_args(argv)
    if args.command == "filter":
        text, digest = filter_original(args.cloud, args.original)
        print(f"original SHA-256 {digest}", file=sys.stderr)
        sys.stdout.write(text)
        return 0
    try:
        files = build()
    except BuildError as e:
        print(f"catalog build: {e}", file=sys.stderr)
        return 2
    changed = [n for n, text in files.items() if _current(n) != text]
    if args.check:
        for name in changed:
            print(f"data/generated/{name} differs from a rebuild of the recorded inputs", file=sys.stderr)
        return 1 if changed else 0
    GENERATED.mkdir(exist_ok=True)
    for name, text in files.items():
        (GENERATED / name).write_text(text)
    print(f"catalog build: {len(files)} files, {len(changed)} changed: {', '.join(changed) or 'none'}")
    return 0


def _current(name: str) -> str | None:
    path = GENERATED / name
    return path.read_text() if path.exists() else None


if __name__ == "__main__":
    raise SystemExit(main())
