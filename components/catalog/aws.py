"""EC2 accelerator instance types: shape, instance store and list prices.

Prices are AWS **on-demand list prices for Linux, shared tenancy, in USD per
instance-hour**, as published in the AWS Price List (the figures behind
https://aws.amazon.com/ec2/pricing/on-demand/). They were read on the ``as_of``
date from a snapshot of that price list (SkyPilot's catalog, cited per row).
``us-east-1`` is the reference region and comes first; ``us-west-2`` lists the
same rates for every type here.

P4d, P4de, P5 and P5en carry the prices after AWS's June 2025 cut of on-demand
rates for NVIDIA GPU instances (P5 from $98.32 to $55.04 per hour, P4d from
$32.77 to $21.96). The same figures were published independently on 2026-11-09
(data-receipts, cited on those rows).

``spot_discount`` is a conservative *typical* discount, read off the spot
prices in the same snapshot (several availability zones, rounded down). Spot
prices move by the hour and differ by zone; treat it as a planning figure.
``committed_discount`` is a planning figure too: a rounded-down typical
discount of a 1-year, no-upfront EC2 Instance Savings Plan for the family. It
was not read per instance type.

Shapes (vCPUs, memory, instance store) come from the EC2 DescribeInstanceTypes
data as published in Karpenter's instance-type reference and from the family
pages. ``local_nvme_gib`` is the instance store total **in GB as AWS prints it**
(AWS says "GB"; the field name keeps the catalog's unit); ``local_nvme_disks``
is the number of instance-store volumes, which the fleet stripes into one RAID0.

``p5e.48xlarge`` has no on-demand or spot rate: AWS sells P5e through EC2
Capacity Blocks for ML only. Its row carries the Capacity Block effective
instance-hour rate instead (reported at $39.80 in most regions after a ~15%
increase in early 2026, from $34.61), no spot and no commitment discount, and
says so in its notes; Capacity Block rates are set by supply and demand and are
fixed only when a block is bought.
"""

from datetime import date

from inference_infra.components.catalog.types import Cloud, InstanceType

_READ = date(2026, 11, 21)  # day the price-list snapshot and shape data were read

_PRICES = (
    "https://aws.amazon.com/ec2/pricing/on-demand/ ; "
    "https://github.com/skypilot-org/skypilot-catalog/blob/master/catalogs/v8/aws/vms.csv"
)
_SHAPES = "https://github.com/aws/karpenter-provider-aws/blob/main/website/content/en/docs/reference/instance-types.md"
_CAPACITY_BLOCKS = (
    "https://aws.amazon.com/ec2/capacityblocks/pricing/ ; "
    "https://administraciondesistemas.com/aws-encarece-un-15-sus-capacity-blocks-con-nvidia-h200-aviso-"
    "para-sysadmins-que-viven-de-la-previsibilidad"
)
_P_CUT = "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/hyperscalers.json"

_FAMILY_PAGE = {
    "g4dn": "https://aws.amazon.com/ec2/instance-types/g4/",
    "g5": "https://aws.amazon.com/ec2/instance-types/g5/",
    "g6": "https://aws.amazon.com/ec2/instance-types/g6/",
    "g6e": "https://aws.amazon.com/ec2/instance-types/g6e/",
    "p4d": "https://aws.amazon.com/ec2/instance-types/p4/",
    "p4de": "https://aws.amazon.com/ec2/instance-types/p4/",
    "p5": "https://aws.amazon.com/ec2/instance-types/p5/",
    "p5e": "https://aws.amazon.com/ec2/instance-types/p5/",
    "p5en": "https://aws.amazon.com/ec2/instance-types/p5/",
    "p6-b200": "https://aws.amazon.com/ec2/instance-types/p6/",
    "inf2": "https://aws.amazon.com/ec2/instance-types/inf2/",
    "trn1": "https://aws.amazon.com/ec2/instance-types/trn1/",
    "trn1n": "https://aws.amazon.com/ec2/instance-types/trn1/",
}


def _ec2(
    name: str,
    accelerator: str,
    count: int,
    vcpus: int,
    memory_gib: float,
    nvme: tuple[int, int],
    usd: float,
    *,
    spot: float,
    committed: float = 0.30,
    extra_source: str = "",
    notes: str = "",
    capacity_blocks_only: bool = False,
) -> InstanceType:
    """One EC2 row; ``nvme`` is (volumes, GB per volume); us-west-2 equals us-east-1 here."""
    disks, gb_each = nvme
    family = name.split(".")[0]
    sources = [_PRICES, _SHAPES, _FAMILY_PAGE[family]]
    if extra_source:
        sources.append(extra_source)
    return InstanceType(
        cloud=Cloud.AWS,
        name=name,
        accelerator=accelerator,
        accelerator_count=count,
        vcpus=vcpus,
        memory_gib=memory_gib,
        local_nvme_gib=float(disks * gb_each),
        local_nvme_disks=disks,
        hourly_usd={"us-east-1": usd, "us-west-2": usd},
        spot_discount=spot,
        committed_discount=committed,
        source=" ; ".join(sources),
        as_of=_READ,
        notes=notes,
        capacity_blocks_only=capacity_blocks_only,
    )


_NO_NVME = (0, 0)

AWS_INSTANCE_TYPES: tuple[InstanceType, ...] = (
    # G4dn: NVIDIA T4. Spot ~60% below on-demand (g4dn.xlarge: $0.19-0.25 vs $0.526).
    _ec2("g4dn.xlarge", "t4", 1, 4, 16, (1, 125), 0.526, spot=0.55),
    _ec2("g4dn.2xlarge", "t4", 1, 8, 32, (1, 225), 0.752, spot=0.55),
    _ec2("g4dn.4xlarge", "t4", 1, 16, 64, (1, 225), 1.204, spot=0.55),
    _ec2("g4dn.8xlarge", "t4", 1, 32, 128, (1, 900), 2.176, spot=0.55),
    _ec2("g4dn.12xlarge", "t4", 4, 48, 192, (1, 900), 3.912, spot=0.55),
    _ec2(
        "g4dn.16xlarge",
        "t4",
        1,
        64,
        256,
        (1, 900),
        4.352,
        spot=0.55,
        notes="1 GPU but dearer than the 4-GPU g4dn.12xlarge: you pay for 64 vCPUs.",
    ),
    _ec2("g4dn.metal", "t4", 8, 96, 384, (2, 900), 7.824, spot=0.55),
    # G5: NVIDIA A10G. Spot 50-70% below on-demand in the snapshot.
    _ec2("g5.xlarge", "a10g", 1, 4, 16, (1, 250), 1.006, spot=0.5),
    _ec2("g5.2xlarge", "a10g", 1, 8, 32, (1, 450), 1.212, spot=0.5),
    _ec2("g5.4xlarge", "a10g", 1, 16, 64, (1, 600), 1.624, spot=0.5),
    _ec2("g5.8xlarge", "a10g", 1, 32, 128, (1, 900), 2.448, spot=0.5),
    _ec2("g5.16xlarge", "a10g", 1, 64, 256, (1, 1900), 4.096, spot=0.5),
    _ec2("g5.12xlarge", "a10g", 4, 48, 192, (1, 3800), 5.672, spot=0.5),
    _ec2("g5.24xlarge", "a10g", 4, 96, 384, (1, 3800), 8.144, spot=0.5),
    _ec2("g5.48xlarge", "a10g", 8, 192, 768, (2, 3800), 16.288, spot=0.5),
    # G6: NVIDIA L4. Spot 50-68% below on-demand.
    _ec2("g6.xlarge", "l4", 1, 4, 16, (1, 250), 0.8048, spot=0.5),
    _ec2("g6.2xlarge", "l4", 1, 8, 32, (1, 450), 0.9776, spot=0.5),
    _ec2("g6.4xlarge", "l4", 1, 16, 64, (1, 600), 1.3232, spot=0.5),
    _ec2("g6.8xlarge", "l4", 1, 32, 128, (2, 450), 2.0144, spot=0.5),
    _ec2("g6.16xlarge", "l4", 1, 64, 256, (2, 940), 3.3968, spot=0.5),
    _ec2("g6.12xlarge", "l4", 4, 48, 192, (4, 940), 4.6016, spot=0.5),
    _ec2("g6.24xlarge", "l4", 4, 96, 384, (4, 940), 6.6752, spot=0.5),
    _ec2("g6.48xlarge", "l4", 8, 192, 768, (8, 940), 13.3504, spot=0.5),
    # G6e: NVIDIA L40S. Spot 50-65% below on-demand.
    _ec2("g6e.xlarge", "l40s", 1, 4, 32, (1, 250), 1.861, spot=0.5),
    _ec2("g6e.2xlarge", "l40s", 1, 8, 64, (1, 450), 2.24208, spot=0.5),
    _ec2("g6e.4xlarge", "l40s", 1, 16, 128, (1, 600), 3.00424, spot=0.5),
    _ec2("g6e.8xlarge", "l40s", 1, 32, 256, (1, 900), 4.52856, spot=0.5),
    _ec2("g6e.16xlarge", "l40s", 1, 64, 512, (1, 1900), 7.57719, spot=0.5),
    _ec2("g6e.12xlarge", "l40s", 4, 48, 384, (2, 1900), 10.49264, spot=0.5),
    _ec2("g6e.24xlarge", "l40s", 4, 96, 768, (2, 1900), 15.06559, spot=0.5),
    _ec2("g6e.48xlarge", "l40s", 8, 192, 1536, (4, 1900), 30.13118, spot=0.5),
    # P4d / P4de: NVIDIA A100 (post-June-2025 prices). Spot 60-70% below on-demand.
    _ec2("p4d.24xlarge", "a100-40gb", 8, 96, 1152, (8, 1000), 21.957642, spot=0.55, extra_source=_P_CUT),
    _ec2("p4de.24xlarge", "a100-80gb", 8, 96, 1152, (8, 1000), 27.44705, spot=0.55, extra_source=_P_CUT),
    # P5 / P5en: NVIDIA H100 / H200 (post-June-2025 prices).
    _ec2(
        "p5.4xlarge",
        "h100-80gb",
        1,
        16,
        256,
        (1, 3800),
        6.88,
        spot=0.0,
        notes="No spot price in the snapshot: plan on on-demand or a reservation.",
    ),
    _ec2(
        "p5.48xlarge",
        "h100-80gb",
        8,
        192,
        2048,
        (8, 3800),
        55.04,
        spot=0.5,
        extra_source=_P_CUT,
        notes="Spot 55-70% below on-demand in most us-east-1 zones; at on-demand in some.",
    ),
    _ec2(
        "p5e.48xlarge",
        "h200-141gb",
        8,
        192,
        2048,
        (8, 3800),
        39.80,
        spot=0.0,
        committed=0.0,
        capacity_blocks_only=True,
        extra_source=_CAPACITY_BLOCKS,
        notes="Capacity Blocks only (no on-demand or spot): the rate is the Capacity Block effective "
        "instance-hour rate, a planning figure; a block's price is fixed when it is bought.",
    ),
    _ec2("p5en.48xlarge", "h200-141gb", 8, 192, 2048, (8, 3800), 63.296, spot=0.55),
    # P6-B200: NVIDIA B200. Spot 75-80% below on-demand in the snapshot; kept conservative.
    _ec2("p6-b200.48xlarge", "b200", 8, 192, 2048, (8, 3800), 113.9328, spot=0.6),
    # Inf2: AWS Inferentia2 (2 NeuronCores per chip). EBS only, no instance store.
    _ec2("inf2.xlarge", "inferentia2", 1, 4, 16, _NO_NVME, 0.7582, spot=0.5),
    _ec2("inf2.8xlarge", "inferentia2", 1, 32, 128, _NO_NVME, 1.96786, spot=0.5),
    _ec2("inf2.24xlarge", "inferentia2", 6, 96, 384, _NO_NVME, 6.49063, spot=0.5),
    _ec2("inf2.48xlarge", "inferentia2", 12, 192, 768, _NO_NVME, 12.98127, spot=0.5),
    # Trn1: AWS Trainium. Spot reads ~85-90% below on-demand but is thin and volatile.
    _ec2("trn1.2xlarge", "trainium1", 1, 8, 32, (1, 474), 1.34375, spot=0.6),
    _ec2("trn1.32xlarge", "trainium1", 16, 128, 512, (4, 1900), 21.5, spot=0.6),
    _ec2(
        "trn1n.32xlarge",
        "trainium1",
        16,
        128,
        512,
        (4, 1900),
        24.78,
        spot=0.6,
        notes="trn1.32xlarge with twice the EFA network bandwidth (1600 Gbps).",
    ),
)
