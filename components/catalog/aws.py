"""AWS instance types. PLACEHOLDER: a seed-sized table, replaced by the researched one."""

from datetime import date

from components.catalog.types import Cloud, InstanceType

AWS_INSTANCE_TYPES: tuple[InstanceType, ...] = (
    InstanceType(
        cloud=Cloud.AWS,
        name="g5.xlarge",
        accelerator="a10g",
        accelerator_count=1,
        vcpus=4,
        memory_gib=16,
        local_nvme_gib=250,
        local_nvme_disks=1,
        hourly_usd={"us-east-1": 1.006},
        spot_discount=0.6,
        committed_discount=0.35,
        source="placeholder",
        as_of=date(2026, 11, 21),
    ),
    InstanceType(
        cloud=Cloud.AWS,
        name="p5.48xlarge",
        accelerator="h100-80gb",
        accelerator_count=8,
        vcpus=192,
        memory_gib=2048,
        local_nvme_gib=30720,
        local_nvme_disks=8,
        hourly_usd={"us-east-1": 55.04},
        spot_discount=0.5,
        committed_discount=0.35,
        source="placeholder",
        as_of=date(2026, 11, 21),
    ),
)
