"""List prices of the billable resources around the accelerators: storage, network, serverless.

One row per priced quantity (a GiB-month of gp3, an hour of a NAT gateway, a
GB a NAT gateway processes). ``usd`` maps region -> USD per ``unit``; the first
region is the reference, used (and named in the basis) for a region the row has
no figure for. ``usage`` rows price quantities that depend on traffic or data
(bytes stored, requests, GB processed): the plan lists them with their unit
prices and prices them only from a usage file.

Figures are the providers' public list prices for the reference regions
(AWS us-east-1, GCP us-central1), before free tiers and volume tiers (the first
tier is used), read from the pages in ``source`` on the ``as_of`` date.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from functools import cache

from inference_infra.components.catalog.types import Cloud

_READ = date(2026, 11, 22)

_EBS = "https://aws.amazon.com/ebs/pricing/"
_VPC = "https://aws.amazon.com/vpc/pricing/"
_EFS = "https://aws.amazon.com/efs/pricing/"
_ELB = "https://aws.amazon.com/elasticloadbalancing/pricing/"
_PRIVATELINK = "https://aws.amazon.com/privatelink/pricing/"
_S3 = "https://aws.amazon.com/s3/pricing/"
_LAMBDA = "https://aws.amazon.com/lambda/pricing/"
_EC2_TRANSFER = "https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer"
_CW = "https://aws.amazon.com/cloudwatch/pricing/"
_SQS = "https://aws.amazon.com/sqs/pricing/"
_EKS = "https://aws.amazon.com/eks/pricing/"
_KMS = "https://aws.amazon.com/kms/pricing/"
_SECRETS = "https://aws.amazon.com/secrets-manager/pricing/"
_GKE = "https://cloud.google.com/kubernetes-engine/pricing"
_PD = "https://cloud.google.com/compute/disks-image-pricing"
_FILESTORE = "https://cloud.google.com/filestore/pricing"
_GCP_NET = "https://cloud.google.com/vpc/network-pricing"
_CLOUD_NAT = "https://cloud.google.com/nat/pricing"
_GCS = "https://cloud.google.com/storage/pricing"
_GCP_LB = "https://cloud.google.com/vpc/network-pricing#lb"
_GCP_IP = "https://cloud.google.com/vpc/network-pricing#ipaddress"
_CLOUD_DNS = "https://cloud.google.com/dns/pricing"
# Container registries, read 2026-11-24. Google's page states Artifact Registry storage itself (its
# first 0.5 GB per billing account free, not applied here); AWS's ECR page renders its table with
# scripts, so the ECR figure is as a dated guide quotes that page (US East, March 2026).
_ARTIFACT_REGISTRY = (
    "https://cloud.google.com/artifact-registry/pricing?hl=id (Storage: over 0.5 GB, $0.10/GB-month)"
)
_ECR = (
    "https://aws.amazon.com/ecr/pricing/ as quoted by https://cloudburn.io/blog/amazon-ecr-pricing "
    "(private repository storage $0.10/GB-month, us-east-1)"
)
_REGISTRY_READ = date(2026, 11, 24)
# Fargate on-demand, us-east-1 only (another region is priced at it and the basis says so): AWS's
# page renders its table with scripts, so the figures are as Vantage's price write-up quotes it.
_FARGATE = (
    "https://aws.amazon.com/fargate/pricing/ as quoted by https://www.vantage.sh/blog/fargate-pricing "
    "(us-east-1 per vCPU-hour and per GB-hour, Linux/x86 and Linux/ARM; read 2026-11-24)"
)

# Hours in a billing month, as AWS and GCP price lists convert monthly rates (365 x 24 / 12, rounded):
# the one figure the pricing, the plan's totals, the budget policy and the dashboards use.
HOURS_PER_MONTH = 730


@dataclass(frozen=True, kw_only=True)
class ResourceRate:
    key: str  # e.g. "aws.ebs.gp3.storage"
    cloud: Cloud
    unit: str  # "GiB-month", "hour", "GB", "1M requests", ...
    usd: Mapping[str, float]  # region -> USD per unit; first is the reference
    usage: bool = False  # priced from a usage file only (traffic, bytes stored, requests)
    free: float = 0.0  # quantity included without charge (e.g. gp3's 3,000 IOPS baseline)
    source: str
    as_of: date
    # Where the figure was checked again, when it was (a dated copy of the provider's page); the
    # row's as_of is then the date of that check.
    checked_against: str = ""

    @property
    def reference_region(self) -> str:
        return next(iter(self.usd))

    def rate(self, region: str | None) -> tuple[float, str]:
        """(USD per unit, where): the region's figure, else the reference region's, saying so."""
        if region is not None and region in self.usd:
            return self.usd[region], region
        ref = self.reference_region
        return self.usd[ref], ref if region is None else f"{ref} (reference; no {region} rate in the catalog)"


def _aws(key: str, unit: str, usd: float, source: str, *, usage: bool = False, free: float = 0.0, west=None):
    rates = {"us-east-1": usd, "us-west-2": usd if west is None else west}
    return ResourceRate(
        key=key, cloud=Cloud.AWS, unit=unit, usd=rates, usage=usage, free=free, source=source, as_of=_READ
    )


def _gcp(key: str, unit: str, usd: float, source: str, *, usage: bool = False, free: float = 0.0):
    return ResourceRate(
        key=key,
        cloud=Cloud.GCP,
        unit=unit,
        usd={"us-central1": usd},
        usage=usage,
        free=free,
        source=source,
        as_of=_READ,
    )


RESOURCE_RATES: tuple[ResourceRate, ...] = (
    # EBS: storage per GiB-month; gp3 includes 3,000 IOPS and 125 MiB/s, more is billed per month.
    _aws("aws.ebs.gp3.storage", "GiB-month", 0.08, _EBS),
    _aws("aws.ebs.gp3.iops", "IOPS-month", 0.005, _EBS, free=3000),
    _aws("aws.ebs.gp3.throughput", "MiB/s-month", 0.04, _EBS, free=125),
    _aws("aws.ebs.gp2.storage", "GiB-month", 0.10, _EBS),
    _aws("aws.ebs.io1.storage", "GiB-month", 0.125, _EBS),
    _aws("aws.ebs.io1.iops", "IOPS-month", 0.065, _EBS),
    _aws("aws.ebs.io2.storage", "GiB-month", 0.125, _EBS),
    _aws("aws.ebs.io2.iops", "IOPS-month", 0.065, _EBS),  # first tier, up to 32,000 IOPS
    _aws("aws.ebs.st1.storage", "GiB-month", 0.045, _EBS),
    _aws("aws.ebs.sc1.storage", "GiB-month", 0.015, _EBS),
    _aws("aws.ebs.standard.storage", "GiB-month", 0.05, _EBS),
    # Network
    _aws("aws.nat_gateway.hour", "hour", 0.045, _VPC),
    _aws("aws.nat_gateway.processed", "GB", 0.045, _VPC, usage=True),
    _aws("aws.public_ipv4.hour", "hour", 0.005, _VPC),  # every public IPv4 address, attached or idle
    _aws("aws.vpc_endpoint.interface.hour", "AZ-hour", 0.01, _PRIVATELINK),
    _aws("aws.vpc_endpoint.interface.processed", "GB", 0.01, _PRIVATELINK, usage=True),
    _aws("aws.alb.hour", "hour", 0.0225, _ELB),
    _aws("aws.alb.lcu", "LCU-hour", 0.008, _ELB, usage=True),
    _aws("aws.nlb.hour", "hour", 0.0225, _ELB),
    _aws("aws.nlb.lcu", "NLCU-hour", 0.006, _ELB, usage=True),
    _aws("aws.gwlb.hour", "hour", 0.0125, _ELB),
    _aws("aws.transfer.internet_out", "GB", 0.09, _EC2_TRANSFER, usage=True),
    _aws("aws.transfer.inter_az", "GB", 0.02, _EC2_TRANSFER, usage=True),  # $0.01 out + $0.01 in
    # EFS: capacity is usage (bytes stored); provisioned throughput is a fixed monthly charge.
    _aws("aws.efs.standard.storage", "GB-month", 0.30, _EFS, usage=True),
    _aws("aws.efs.ia.storage", "GB-month", 0.016, _EFS, usage=True),
    _aws("aws.efs.elastic.read", "GB", 0.03, _EFS, usage=True),
    _aws("aws.efs.elastic.write", "GB", 0.06, _EFS, usage=True),
    _aws("aws.efs.provisioned_throughput", "MiB/s-month", 6.00, _EFS),
    # Object storage, serverless, logs, queues: all usage.
    _aws("aws.s3.standard.storage", "GB-month", 0.023, _S3, usage=True),
    _aws("aws.s3.put_requests", "1k requests", 0.005, _S3, usage=True),
    _aws("aws.s3.get_requests", "1k requests", 0.0004, _S3, usage=True),
    _aws("aws.lambda.requests", "1M requests", 0.20, _LAMBDA, usage=True),
    _aws("aws.lambda.duration.x86_64", "GB-second", 0.0000166667, _LAMBDA, usage=True),
    _aws("aws.lambda.duration.arm64", "GB-second", 0.0000133334, _LAMBDA, usage=True),
    _aws("aws.cloudwatch.logs.ingest", "GB", 0.50, _CW, usage=True),
    _aws("aws.cloudwatch.logs.storage", "GB-month", 0.03, _CW, usage=True),
    _aws("aws.sqs.requests", "1M requests", 0.40, _SQS, usage=True),
    # Control planes and keys
    _aws("aws.eks.cluster.hour", "hour", 0.10, _EKS),  # standard support
    _aws("aws.kms.key.month", "key-month", 1.00, _KMS),
    _aws("aws.secretsmanager.secret.month", "secret-month", 0.40, _SECRETS),
    _gcp("gcp.gke.cluster.hour", "hour", 0.10, _GKE),  # cluster management fee
    # GCP disks
    _gcp("gcp.pd.pd-standard.storage", "GiB-month", 0.04, _PD),
    _gcp("gcp.pd.pd-balanced.storage", "GiB-month", 0.10, _PD),
    _gcp("gcp.pd.pd-ssd.storage", "GiB-month", 0.17, _PD),
    _gcp("gcp.pd.pd-extreme.storage", "GiB-month", 0.125, _PD),
    _gcp("gcp.pd.pd-extreme.iops", "IOPS-month", 0.065, _PD),
    _gcp("gcp.pd.hyperdisk-balanced.storage", "GiB-month", 0.08, _PD),
    _gcp("gcp.pd.hyperdisk-balanced.iops", "IOPS-month", 0.005, _PD, free=3000),
    _gcp("gcp.pd.hyperdisk-balanced.throughput", "MiB/s-month", 0.04, _PD, free=140),
    _gcp("gcp.local_ssd.storage", "GiB-month", 0.08, _PD),  # 375 GiB per disk
    # Filestore capacity per tier (provisioned capacity, billed whether used or not).
    # Basic HDD: $0.000274 per GiB-hour x 730 h (the pricing page's worked example, us-west1; corrected
    # from 0.16 on 2026-11-24, see _CHECKS)
    _gcp("gcp.filestore.BASIC_HDD", "GiB-month", 0.20, _FILESTORE),
    _gcp("gcp.filestore.STANDARD", "GiB-month", 0.20, _FILESTORE),
    _gcp("gcp.filestore.BASIC_SSD", "GiB-month", 0.30, _FILESTORE),
    _gcp("gcp.filestore.PREMIUM", "GiB-month", 0.30, _FILESTORE),
    _gcp("gcp.filestore.ZONAL", "GiB-month", 0.25, _FILESTORE),
    _gcp("gcp.filestore.HIGH_SCALE_SSD", "GiB-month", 0.25, _FILESTORE),
    _gcp("gcp.filestore.REGIONAL", "GiB-month", 0.45, _FILESTORE),
    _gcp("gcp.filestore.ENTERPRISE", "GiB-month", 0.45, _FILESTORE),
    # Network
    _gcp("gcp.cloud_nat.vm_hour", "VM-hour", 0.0014, _CLOUD_NAT),  # capped at 32 VMs per gateway
    _gcp("gcp.cloud_nat.processed", "GB", 0.045, _CLOUD_NAT, usage=True),
    # Cloud DNS: a managed zone (public or private) bills per month, the first 25 zones at this rate;
    # queries at this rate for the first billion a month.
    _gcp("gcp.dns.zone.month", "zone-month", 0.20, _CLOUD_DNS),
    _gcp("gcp.dns.queries", "1M queries", 0.40, _CLOUD_DNS, usage=True),
    _gcp("gcp.forwarding_rule.first5", "hour", 0.025, _GCP_LB),  # first 5 rules per project and region
    _gcp("gcp.forwarding_rule.additional", "hour", 0.01, _GCP_LB),
    _gcp("gcp.lb.processed", "GB", 0.008, _GCP_LB, usage=True),
    _gcp("gcp.external_ip.hour", "hour", 0.005, _GCP_IP),
    _gcp("gcp.transfer.internet_out", "GB", 0.12, _GCP_NET, usage=True),
    _gcp("gcp.transfer.inter_zone", "GB", 0.01, _GCP_NET, usage=True),
    # Object storage
    _gcp("gcp.gcs.standard.storage", "GB-month", 0.020, _GCS, usage=True),
    _gcp("gcp.gcs.class_a", "1k operations", 0.005, _GCS, usage=True),
    _gcp("gcp.gcs.class_b", "1k operations", 0.0004, _GCS, usage=True),
)

# Fargate tasks (ECS services on FARGATE): per vCPU-hour and per GB-hour of the task definition.
RESOURCE_RATES += tuple(
    ResourceRate(
        key=key, cloud=Cloud.AWS, unit=unit, usd={"us-east-1": usd}, source=_FARGATE, as_of=_REGISTRY_READ
    )
    for key, unit, usd in (
        ("aws.fargate.vcpu.x86_64", "vCPU-hour", 0.04048),
        ("aws.fargate.memory.x86_64", "GB-hour", 0.004445),
        ("aws.fargate.vcpu.arm64", "vCPU-hour", 0.03238),
        ("aws.fargate.memory.arm64", "GB-hour", 0.00356),
    )
)

# Container registry storage (usage: priced from a usage file's storage_gb).
RESOURCE_RATES += (
    replace(_aws("aws.ecr.storage", "GB-month", 0.10, _ECR, usage=True), as_of=_REGISTRY_READ),
    replace(
        _gcp("gcp.artifact_registry.storage", "GB-month", 0.10, _ARTIFACT_REGISTRY, usage=True),
        as_of=_REGISTRY_READ,
    ),
)


# Rows checked again on 2026-11-24 against dated copies of the providers' pages: the figures held,
# but for Filestore Basic HDD (the page's worked example gives $0.20, not 0.16). The other rows could
# not be re-checked from here: the pricing pages render their tables with scripts, and no dated copy
# of them was found; they keep their 2026-11-22 date.
_CHECKED = date(2026, 11, 24)
_LAMBDA_COPY = (
    "https://github.com/api-evangelist/aws-lambda/blob/2540b080595eb6a0b672c67986e91a31b5e48cea/"
    "plans/aws-lambda-plans-pricing.yml (transcribed from aws.amazon.com/lambda/pricing, 2026-05-05)"
)
_GCS_COPY = (
    "https://raw.githubusercontent.com/api-evangelist/gcp-cloud-storage/refs/heads/main/plans/"
    "gcp-cloud-storage-plans-pricing.yml (transcribed from cloud.google.com/storage/pricing, 2026-09-20:"
    " $0.000027397 per GiB-hour x 730 h)"
)
_FILESTORE_EXAMPLE = (
    "https://cloud.google.com/filestore/pricing?hl=pl (pricing example: a Basic HDD instance in us-west1-b "
    "at $0.000274 per GiB-hour; read 2026-11-24)"
)
_CHECKS = {
    "gcp.filestore.BASIC_HDD": _FILESTORE_EXAMPLE,
    "gcp.filestore.STANDARD": _FILESTORE_EXAMPLE,
    "aws.lambda.requests": _LAMBDA_COPY,
    "aws.lambda.duration.x86_64": _LAMBDA_COPY,
    "gcp.gcs.standard.storage": _GCS_COPY,
}
RESOURCE_RATES = tuple(
    replace(r, as_of=_CHECKED, checked_against=_CHECKS[r.key]) if r.key in _CHECKS else r
    for r in RESOURCE_RATES
)


@cache
def _rates() -> dict[str, ResourceRate]:
    return {r.key: r for r in RESOURCE_RATES}


def resource_rate(key: str) -> ResourceRate | None:
    """The rate row for key, or None when the catalog has none (the caller says so)."""
    return _rates().get(key)
