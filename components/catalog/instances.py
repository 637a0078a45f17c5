"""Instance types from the data files: a shape row joined with its price rows.

``instance_types.csv`` holds each type's shape, discounts and notes (kept by hand); its on-demand
prices, one row per region with their own ``source`` and ``as_of``, come from
``generated/aws_prices.csv`` and ``generated/gcp_prices.csv`` (rebuilt by ``make catalog``) and
``prices.csv`` (kept by hand: what the sources do not price, the p5e Capacity Block rate and
a3-megagpu-8g in us-central1). A type has its price for a region in exactly one of the files; the
first region listed (``prices.csv`` is read first) is its reference region.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from inference_infra.components.catalog.tables import by_region, day, flag, joined, rows
from inference_infra.components.catalog.types import Cloud, InstanceType

PRICE_FILES = ("prices.csv", "generated/aws_prices.csv", "generated/gcp_prices.csv")


def price_rows(cloud: Cloud) -> dict[str, list[Mapping[str, str]]]:
    """Type name -> its on-demand price rows (one per region); a region priced twice is an error."""
    out: dict[str, list[Mapping[str, str]]] = defaultdict(list)
    seen: dict[tuple[str, str], str] = {}
    for name in PRICE_FILES:
        for row in rows(name):
            if row["cloud"] != cloud:
                continue
            key = (row["name"], row["region"])
            if key in seen:
                raise ValueError(f"{key[0]} in {key[1]} is priced in both {seen[key]} and {name}")
            seen[key] = name
            out[row["name"]].append(row)
    return out


def load_instance_types(cloud: Cloud) -> tuple[InstanceType, ...]:
    prices = price_rows(cloud)
    out = []
    for shape in rows("instance_types.csv"):
        if shape["cloud"] != cloud:
            continue
        priced = prices.get(shape["name"])
        if not priced:
            raise ValueError(f"{cloud.value} {shape['name']} has no on-demand price row")
        out.append(
            InstanceType(
                cloud=cloud,
                name=shape["name"],
                accelerator=shape["accelerator"],
                accelerator_count=int(shape["accelerator_count"]),
                vcpus=int(shape["vcpus"]),
                memory_gib=float(shape["memory_gib"]),
                local_nvme_gib=float(shape["local_nvme_gib"]),
                local_nvme_disks=int(shape["local_nvme_disks"]),
                hourly_usd=by_region(priced),
                spot_discount=float(shape["spot_discount"]),
                committed_discount=float(shape["committed_discount"]),
                capacity_blocks_only=flag(shape["capacity_blocks_only"]),
                tpu_topology=shape["tpu_topology"] or None,
                hosts=int(shape["hosts"]),
                source=joined([*(r["source"] for r in priced), shape["source"]]),
                as_of=day(priced[0]["as_of"]),  # the reference region's price date
                notes=shape["notes"],
            )
        )
    return tuple(out)
