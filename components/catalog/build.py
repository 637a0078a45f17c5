"""Rebuild the catalog rows that come from pinned public price lists (``make catalog``; by hand, not in CI).

Reads only the committed copies in ``data/sources/`` (``SOURCES.json`` names each one's URL, commit,
filter and SHA-256, and the build stops when a copy's SHA-256 differs): SkyPilot's AWS and GCP
``vms.csv`` and Cyclenerd's ``pricing.yml`` (Google's Cloud Billing Catalog, composed per machine
type); and the hand-kept tables that say which types the catalog has (``instance_types.csv``,
``gcp_n1.csv``, ``spot.csv``, ``prices.csv``). It writes:

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

* ``data/generated/gcp_prices.csv``: the on-demand USD per hour of every GCP accelerator type, per
  region the sources price it in. A GPU machine (G2, A2, A3) is Cyclenerd's ``hour`` figure, which
  is Google's per-unit SKU rates summed the way Google bills them: vCPUs and memory at the series'
  rates, the GPUs, and the bundled local SSD (``storage.local`` per GiB-month / 730 h); ``notes``
  splits off the local SSD. SkyPilot's GCP GPU rows are not used for on-demand: they disagree with
  Google's price pages (see the catalog README). A TPU slice is its ``tpu-<slice>`` row of
  SkyPilot's GCP copy, whose on-demand TPU figures are Google's per-chip rates; the build stops
  when a generation's slices in a region disagree on the per-chip rate. A type and region the
  sources do not price (a3-megagpu-8g in us-central1) stays in the hand-kept ``prices.csv``, which
  the build skips. Each type's reference region (``REFERENCE_REGION``) is written first.

    python -m inference_infra.components.catalog.build            # rewrite data/generated/
    python -m inference_infra.components.catalog.build --check    # exit 1 if a rebuild would change them
    python -m inference_infra.components.catalog.build filter aws vms.csv > copy.csv   # from an original
    python -m inference_infra.components.catalog.build filter cyclenerd pricing.yml > copy.yml
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
from datetime import datetime
from pathlib import Path

# Cyclenerd's (and Google's) month, for the local SSD's per-GiB-month rate. components.units is standard
# library only: importing it loads none of the tables this rewrites.
from inference_infra.components.units import HOURS_PER_MONTH

DATA = Path(__file__).resolve().parent / "data"
SOURCES = DATA / "sources"
GENERATED = DATA / "generated"

PRICE_COLUMNS = ("cloud", "name", "region", "hourly_usd", "source", "as_of", "notes")
SPOT_COLUMNS = ("cloud", "name", "region", "zones", "zone_usd", "source", "as_of", "notes")

AWS_INPUT = "skypilot-aws-vms.csv"
GCP_INPUT = "skypilot-gcp-vms.csv"
GCE_INPUT = "cyclenerd-pricing.yml"
_INPUTS = {"aws": AWS_INPUT, "gcp": GCP_INPUT, "cyclenerd": GCE_INPUT}

# A GCP type's reference region, the first row written (a lookup outside the type's regions falls
# back to it): us-central1 for GPU machines; v4 is sold only in us-central2 and v5p first in us-east5.
REFERENCE_REGION: Mapping[str, str] = {
    "gpu": "us-central1",
    "tpu-v4": "us-central2",
    "tpu-v5e": "us-central1",
    "tpu-v5p": "us-east5",
    "tpu-v6e": "us-central1",
}

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


def _checked(name: str) -> Path:
    path = SOURCES / name
    recorded = sources()[name]["sha256"]
    if (actual := sha256(path)) != recorded:
        raise BuildError(f"{path}: SHA-256 {actual} differs from the {recorded} SOURCES.json records")
    return path


def read_input(name: str) -> list[dict[str, str]]:
    """The committed copy's rows, after checking its SHA-256 against SOURCES.json."""
    with _checked(name).open(newline="") as f:
        return list(csv.DictReader(f))


def read_pricing() -> dict:
    """The committed copy of Cyclenerd's pricing.yml, parsed, after checking its SHA-256."""
    import yaml  # only the build reads YAML; the catalog's lookups read the generated CSV

    return yaml.safe_load(_checked(GCE_INPUT).read_text())


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


def _region_figure(zone_usd: Mapping[str, float], what: str, kind: str = "spot") -> float:
    """GCP prices per region: one figure, or an error naming the zones that disagree."""
    figures = set(zone_usd.values())
    if len(figures) != 1:
        raise BuildError(f"{what}: zones list different {kind} prices {dict(zone_usd)}")
    return figures.pop()


def _by_zone(rows: list[dict[str, str]], column: str) -> dict[str, float]:
    return {
        r["AvailabilityZone"]: float(r[column])
        for r in rows
        if r[column] and float(r[column]) != _PLACEHOLDER_USD
    }


def _spot_by_zone(rows: list[dict[str, str]]) -> dict[str, float]:
    return _by_zone(rows, "SpotPrice")


def _reference_first(reference: str, regions: Sequence[str]) -> list[str]:
    return [reference, *(r for r in regions if r != reference)]


def _generated_on(pricing: Mapping) -> str:
    """The day pricing.yml was generated ("Thu Jul 30 06:13:17 2026"), as an ISO date."""
    return datetime.strptime(pricing["about"]["generated"], "%a %b %d %H:%M:%S %Y").date().isoformat()


_SHAPE_KEYS = ("cpu", "ram", "local-ssd")  # a machine's other keys in pricing.yml count its GPUs


def _gcp_gpu_prices(
    catalog: list[dict[str, str]], hand_prices: set[tuple[str, str, str]]
) -> list[tuple[str, ...]]:
    """GPU machines from Cyclenerd's pricing.yml: its composed ``hour``, the local SSD split off in notes."""
    meta = sources()[GCE_INPUT]
    pricing = read_pricing()
    as_of = _generated_on(pricing)
    machines = pricing["compute"]["instance"]
    local_ssd = pricing["compute"]["storage"]["local"]["cost"]
    out: list[tuple[str, ...]] = []
    for item in (r for r in catalog if r["cloud"] == "gcp" and not r["tpu_topology"]):
        name = item["name"]
        entry = machines.get(name)
        if entry is None:
            raise BuildError(f"{name} is not in {GCE_INPUT}: add it to its filter in SOURCES.json")
        gpus = {k: v for k, v in entry.items() if k not in (*_SHAPE_KEYS, "cost")}
        shape = (entry["cpu"], sum(gpus.values()), entry.get("local-ssd", 0))
        wanted = (int(item["vcpus"]), int(item["accelerator_count"]), float(item["local_nvme_gib"]))
        if shape != wanted:
            raise BuildError(
                f"{name}: {GCE_INPUT} lists (vCPUs, GPUs, SSD GiB) {shape}, the catalog {wanted}"
            )
        for region in _reference_first(REFERENCE_REGION["gpu"], meta["filter"]["regions"]):
            cost = entry["cost"].get(region)
            if cost is None or ("gcp", name, region) in hand_prices:
                continue
            hour, gib = float(cost["hour"]), entry.get("local-ssd", 0)
            accelerators = ", ".join(f"{n} x {g}" for g, n in gpus.items())
            parts = f"{entry['cpu']} vCPUs, {entry['ram']} GB, {accelerators}"
            if gib:
                ssd = local_ssd[region]["month"] * gib / HOURS_PER_MONTH
                notes = f"{parts} ${_fmt(hour - ssd)}/h + {gib} GiB local SSD ${_fmt(ssd)}/h"
            else:
                notes = f"{parts} ${_fmt(hour)}/h"
            out.append(("gcp", name, region, _fmt(hour), meta["url"], as_of, notes))
    return out


def _gcp_tpu_prices(
    catalog: list[dict[str, str]], hand_prices: set[tuple[str, str, str]]
) -> list[tuple[str, ...]]:
    """TPU slices from SkyPilot's GCP copy: the ``tpu-<slice>`` row's Price, one per-chip rate per region."""
    meta = sources()[GCP_INPUT]
    listed_alone = [r for r in read_input(GCP_INPUT) if not r["InstanceType"]]
    accelerators = _keyed(listed_alone, "AcceleratorName", "AcceleratorCount", "Region")
    out: list[tuple[str, ...]] = []
    chip_rates: dict[tuple[str, str], dict[str, float]] = {}
    for item in (r for r in catalog if r["cloud"] == "gcp" and r["tpu_topology"]):
        name, chips = item["name"], int(item["accelerator_count"])
        for region in _reference_first(REFERENCE_REGION[item["accelerator"]], meta["filter"]["regions"]):
            listed = _by_zone(accelerators.get((f"tpu-{name}", "1", region), []), "Price")
            if not listed or ("gcp", name, region) in hand_prices:
                continue
            usd = _region_figure(listed, f"tpu-{name} in {region}", "on-demand")
            rate = round(usd / chips, 6)
            chip_rates.setdefault((item["accelerator"], region), {})[name] = rate
            notes = f"{chips} chip{'s' if chips > 1 else ''} x ${rate:g}/chip-hour"
            out.append(("gcp", name, region, _fmt(usd), meta["url"], meta["copied_on"], notes))
    for (generation, region), rates in chip_rates.items():
        if len(set(rates.values())) != 1:
            raise BuildError(f"{generation} in {region}: slices list different per-chip rates {rates}")
    return out


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
    hand_prices = {(r["cloud"], r["name"], r["region"]) for r in _read("prices.csv")}
    prices, aws_spot = _aws_rows(catalog, hand_spot)
    gcp_spot = _gcp_spot(catalog, n1, hand_spot)
    gcp_prices = [*_gcp_gpu_prices(catalog, hand_prices), *_gcp_tpu_prices(catalog, hand_prices)]
    return {
        "aws_prices.csv": _csv(PRICE_COLUMNS, prices),
        "gcp_prices.csv": _csv(PRICE_COLUMNS, gcp_prices),
        "spot.csv": _csv(SPOT_COLUMNS, [*aws_spot, *gcp_spot]),
    }


_YAML_KEY = re.compile(r"( *)([^\s:#][^:]*):(?: .*)?\n?")


def _kept_pricing_path(path: Sequence[str], spec: Mapping) -> bool:
    """Whether pricing.yml's key at path (under ``compute``) is in the filtered copy."""
    types, regions, storage = set(spec["instance_types"]), set(spec["regions"]), set(spec["storage"])
    match path:
        case ["compute"] | ["compute", "instance" | "storage"]:
            return True
        case ["compute", "instance", name, *rest] if name in types:
            return len(rest) < 2 or rest[0] != "cost" or rest[1] in regions
        case ["compute", "storage", name, *rest] if name in storage:
            return len(rest) < 2 or rest[0] != "cost" or rest[1] in regions
    return False


def filter_pricing(text: str) -> str:
    """The lines of Cyclenerd's pricing.yml the catalog uses, in the original's order and text.

    Keeps the document marker and the ``about`` block whole (its date, URL and licence), and under
    ``compute`` the listed machine types and storage kinds with their cost blocks of the listed regions.
    Everything under ``compute`` is a mapping, two spaces an indent; a line that is not stops the filter.
    """
    spec = sources()[GCE_INPUT]["filter"]
    kept: list[str] = []
    top = ""
    path: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if not line.startswith((" ", "\n")):  # "---" or a top-level key
            top = line.split(":", 1)[0].strip()
        if top != "compute":
            if top in ("---", "about"):
                kept.append(line)
            continue
        if not (key := _YAML_KEY.fullmatch(line)) or len(key[1]) % 2:
            raise BuildError(f"pricing.yml line {number} is not a key at an even indent: {line!r}")
        path = [*path[: len(key[1]) // 2], key[2]]
        if _kept_pricing_path(path, spec):
            kept.append(line)
    return "".join(kept)


def filter_original(cloud: str, original: Path) -> tuple[str, str]:
    """(the filtered copy's text, the original's SHA-256) by the filter SOURCES.json records."""
    if cloud == "cyclenerd":
        return filter_pricing(original.read_text()), sha256(original)
    spec = sources()[_INPUTS[cloud]]["filter"]
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
    cut = sub.add_parser("filter", help="print the filtered copy of an original (vms.csv, pricing.yml)")
    cut.add_argument(
        "cloud", choices=tuple(_INPUTS), help="aws, gcp: SkyPilot vms.csv; cyclenerd: pricing.yml"
    )
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
