"""EC2 accelerator instance types: shape, instance store and list prices.

The rows live in ``data/``: shapes, discounts and notes in ``instance_types.csv`` (kept by hand),
on-demand prices in ``generated/aws_prices.csv``, which ``make catalog`` rebuilds from the committed
copy of SkyPilot's AWS catalog (``data/sources/``, pinned commit, SHA-256 checked).

Prices are AWS **on-demand list prices for Linux, shared tenancy, in USD per
instance-hour**, as published in the AWS Price List (the figures behind
https://aws.amazon.com/ec2/pricing/on-demand/), as SkyPilot's catalog lists
them at the pinned commit, per region. ``us-east-1`` is the reference region
and comes first; ``us-west-2`` lists the same rates for every type here but
p4d.24xlarge ($21.95764 against $21.957642).

P4d, P4de, P5 and P5en carry the prices after AWS's June 2025 cut of on-demand
rates for NVIDIA GPU instances (P5 from $98.32 to $55.04 per hour, P4d from
$32.77 to $21.96). The same figures were published independently on 2026-11-09
(data-receipts, cited on those rows).

``spot_discount`` is a conservative *typical* discount, read off the spot
prices in the same snapshot (several availability zones, rounded down); a plan
prices spot from the spot snapshot (``spot.py``), by type, region and zone.
``committed_discount`` is a planning figure: a rounded-down typical discount of
a 1-year, no-upfront EC2 Instance Savings Plan for the family. It was not read
per instance type.

Shapes (vCPUs, memory, instance store) come from the EC2 DescribeInstanceTypes
data as published in Karpenter's instance-type reference and from the family
pages. ``local_nvme_gib`` is the instance store total **in GB as AWS prints it**
(AWS says "GB"; the field name keeps the catalog's unit); ``local_nvme_disks``
is the number of instance-store volumes, which the fleet stripes into one RAID0.

``p5e.48xlarge`` has no on-demand or spot rate (the source lists it without a
price): AWS sells P5e through EC2 Capacity Blocks for ML only. Its row in
``prices.csv`` carries the Capacity Block effective instance-hour rate instead
(reported at $39.80 in most regions after a ~15% increase in early 2026, from
$34.61), no spot and no commitment discount, and says so in its notes; Capacity
Block rates are set by supply and demand and are fixed only when a block is bought.
"""

from inference_infra.components.catalog.instances import load_instance_types
from inference_infra.components.catalog.types import Cloud, InstanceType

AWS_INSTANCE_TYPES: tuple[InstanceType, ...] = load_instance_types(Cloud.AWS)
