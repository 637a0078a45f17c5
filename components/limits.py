"""Upper bounds on how many machines a fleet may plan, and the hosts a TPU slice stands for.

Standard library only, so a stack file's counts can be checked before any component, provider
SDK or typed config is imported (`infra/stack_bounds.py`): a mistyped `count: 100000` is one
error in well under a second, not a plan that takes the machine down.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from functools import cache
from pathlib import Path

# The most machines one fleet may plan unless its `max_machines` says more (the largest reference
# pool has 4 machines), and the most it may say.
MAX_MACHINES_PER_FLEET = 1_000
MAX_MACHINES_PER_FLEET_CEILING = 10_000

# The catalog's shapes (components/catalog/instances.py reads the same file with its prices): a TPU
# slice's row names its generation's accelerator (tpu-v5e), its topology (4x4) and its hosts (4).
_SHAPES = Path(__file__).resolve().parent / "catalog" / "data" / "instance_types.csv"


@cache
def _tpu_slices() -> tuple[tuple[str, str, str, int], ...]:
    """(slice name, accelerator, topology, hosts) of every GCP TPU slice of the catalog."""
    with _SHAPES.open(newline="") as f:
        return tuple(
            (row["name"], row["accelerator"], row["tpu_topology"], int(row["hosts"]))
            for row in csv.DictReader(f)
            if row["cloud"] == "gcp" and row["tpu_topology"]
        )


def tpu_slice_hosts(
    accelerator_type: object = None, generation: object = None, topology: object = None
) -> int | None:
    """The hosts (TPU VMs) of the catalog's slice a TpuVm names, by its accelerator type (v6e-256) or
    its generation and topology (v6e, 16x16); None when it names none the catalog has (the typed
    config says why) or none at all (a slice the planner picks serves on one host)."""
    for name, accelerator, shape, hosts in _tpu_slices():
        if accelerator_type is not None:
            if name == accelerator_type:
                return hosts
        elif generation is not None and accelerator == f"tpu-{generation}" and shape == topology:
            return hosts
    return None


def tpu_hosts_by_slice() -> Mapping[str, int]:
    """Slice name -> hosts, for checks that the table above reads as the catalog does."""
    return {name: hosts for name, _, _, hosts in _tpu_slices()}
