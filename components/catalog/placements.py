"""Which zones offer which accelerators on GCP: TPU generations per zone, GPU machine types per zone.

A TPU slice or a GPU VM in a zone that does not offer its accelerator fails only at deploy time
(after the rest of the stack is built), so the components check the zone first.

- TPU generations: ``data/tpu_zones.csv``, by hand from Google's "TPU regions and zones" page
  (read 2026-12-02; ``notes`` says which parts of the page were read). A zone the row does not
  list is refused.
- GPU machine types (G2, A2, A3): ``data/generated/gcp_machine_zones.csv``, which ``make catalog``
  writes from the zones SkyPilot's GCP copy lists each machine in (the catalog's own source, 5
  regions). A region that copy does not cover is not checked (``gpu_machine_zones`` returns None).

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from inference_infra.components.catalog.tables import day, rows
from inference_infra.components.errors import Problem, did_you_mean


@dataclass(frozen=True, kw_only=True)
class AcceleratorZones:
    name: str  # a TPU accelerator (tpu-v6e) or a GCE machine type (g2-standard-8)
    zones: tuple[str, ...]
    source: str
    as_of: date
    notes: str = ""


TPU_ZONES: dict[str, AcceleratorZones] = {
    r["accelerator"]: AcceleratorZones(
        name=r["accelerator"],
        zones=tuple(r["zones"].split()),
        source=r["source"],
        as_of=day(r["as_of"]),
        notes=r["notes"],
    )
    for r in rows("tpu_zones.csv")
}


def _machine_zones() -> dict[tuple[str, str], AcceleratorZones]:
    return {
        (r["name"], r["region"]): AcceleratorZones(
            name=r["name"], zones=tuple(r["zones"].split()), source=r["source"], as_of=day(r["as_of"])
        )
        for r in rows("generated/gcp_machine_zones.csv")
    }


GPU_MACHINE_ZONES = _machine_zones()


def tpu_zones(accelerator: str) -> AcceleratorZones | None:
    """The zones Google lists for a TPU generation ('tpu-v6e'), or None when the table lacks it."""
    return TPU_ZONES.get(accelerator)


def gpu_machine_zones(machine_type: str, region: str) -> AcceleratorZones | None:
    """The zones of `region` the catalog's source lists the GPU machine in, or None when it does
    not cover that machine and region (then nothing is known, and nothing is refused)."""
    return GPU_MACHINE_ZONES.get((machine_type, region))


def _region(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def tpu_zone_problems(input_name: str, zone: str, slice_name: str, accelerator: str) -> list[Problem]:
    """A TPU slice placed in a zone Google does not list for its generation."""
    offered = tpu_zones(accelerator)
    if offered is None or zone in offered.zones:
        return []
    generation = accelerator.removeprefix("tpu-")
    near = [z for z in offered.zones if _region(z) == _region(zone)]
    hint = f" (in its region: {', '.join(near)})" if near else ""
    return [
        Problem(
            input_name,
            zone,
            f"does not offer TPU {generation} ({slice_name}){hint}: Google's TPU zone table "
            f"({offered.as_of.isoformat()}, {offered.source.split(' ; ')[0]}) lists {generation} in "
            f"{', '.join(offered.zones)}. Place the slice in one of them (zone, or gcp:zone), or pick "
            f"{_here(zone)}",
        )
    ]


def _here(zone: str) -> str:
    """The generations Google lists in the zone, as the fix to offer."""
    here = [g.removeprefix("tpu-") for g, row in TPU_ZONES.items() if zone in row.zones]
    if not here:
        return "another generation (Google's table lists none in this zone)"
    return f"a generation offered in {zone} (generation={' or '.join(repr(g) for g in here)})"


def gpu_zone_problems(input_name: str, zone: str, machine_type: str) -> list[Problem]:
    """A GPU machine type placed in a zone of a region where the catalog's source lists it elsewhere."""
    offered = gpu_machine_zones(machine_type, _region(zone))
    if offered is None or zone in offered.zones:
        return []
    return [
        Problem(
            input_name,
            zone,
            f"does not offer {machine_type}{did_you_mean(zone, offered.zones)}: the catalog's source "
            f"(SkyPilot's GCP catalog, copied {offered.as_of.isoformat()}) lists it in "
            f"{', '.join(offered.zones)} of {_region(zone)}. Place the fleet in one of them",
        )
    ]
