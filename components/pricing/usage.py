"""Usage-priced items: what bills by bytes stored, requests or traffic, and a usage file to price them.

The plan cannot know how many bytes a bucket will hold or how many requests a
Lambda will serve, so every such quantity is listed (`cost.usage_based`) with
its unit price and left unpriced, until a usage file gives the expected
monthly quantities, in the spirit of Infracost's usage file:

```yaml
version: 0.1
resource_usage:
  model-weights:             # a resource's name (or its URN)
    storage_gb: 5000
    monthly_get_requests: 200000
  data-transfer:             # the stack's traffic, not tied to one resource
    aws_internet_out_gb: 100
```

A name or key the stack does not have is an error (a typo must not silently
price nothing); quantities are monthly and must be non-negative numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inference_infra.components import bounded_yaml, input_size
from inference_infra.components.catalog.resources import resource_rate
from inference_infra.components.errors import InputError, close_matches
from inference_infra.components.units import HOURS_PER_MONTH

USAGE = "usage"
DATA_TRANSFER = "data-transfer"

# type token -> [(usage key, rate key, catalog units per unit of the usage key)]
_S3 = [
    ("storage_gb", "aws.s3.standard.storage", 1.0),
    ("monthly_put_requests", "aws.s3.put_requests", 1e-3),
    ("monthly_get_requests", "aws.s3.get_requests", 1e-3),
]
_GCS = [
    ("storage_gb", "gcp.gcs.standard.storage", 1.0),
    ("monthly_class_a_operations", "gcp.gcs.class_a", 1e-3),
    ("monthly_class_b_operations", "gcp.gcs.class_b", 1e-3),
]
_PROCESSED_AWS_NAT = [("monthly_data_processed_gb", "aws.nat_gateway.processed", 1.0)]
SPECS: dict[str, list[tuple[str, str, float]]] = {
    "aws:s3/bucket:Bucket": _S3,
    "aws:s3/bucketV2:BucketV2": _S3,
    "aws:efs/fileSystem:FileSystem": [
        ("storage_gb", "aws.efs.standard.storage", 1.0),
        ("infrequent_access_storage_gb", "aws.efs.ia.storage", 1.0),
        ("monthly_read_gb", "aws.efs.elastic.read", 1.0),
        ("monthly_write_gb", "aws.efs.elastic.write", 1.0),
    ],
    "aws:ec2/natGateway:NatGateway": _PROCESSED_AWS_NAT,
    "aws:cloudwatch/logGroup:LogGroup": [
        ("monthly_data_ingested_gb", "aws.cloudwatch.logs.ingest", 1.0),
        ("storage_gb", "aws.cloudwatch.logs.storage", 1.0),
    ],
    "aws:sqs/queue:Queue": [("monthly_requests", "aws.sqs.requests", 1e-6)],
    "gcp:storage/bucket:Bucket": _GCS,
    "aws:ecr/repository:Repository": [("storage_gb", "aws.ecr.storage", 1.0)],
    "gcp:compute/routerNat:RouterNat": [("monthly_data_processed_gb", "gcp.cloud_nat.processed", 1.0)],
    "gcp:dns/managedZone:ManagedZone": [("monthly_queries", "gcp.dns.queries", 1e-6)],
    "gcp:compute/forwardingRule:ForwardingRule": [("monthly_data_processed_gb", "gcp.lb.processed", 1.0)],
    "gcp:compute/globalForwardingRule:GlobalForwardingRule": [
        ("monthly_data_processed_gb", "gcp.lb.processed", 1.0)
    ],
}
_TRANSFER = {
    "aws": [
        ("aws_internet_out_gb", "aws.transfer.internet_out", 1.0),
        ("aws_inter_az_gb", "aws.transfer.inter_az", 1.0),
    ],
    "gcp": [
        ("gcp_internet_out_gb", "gcp.transfer.internet_out", 1.0),
        ("gcp_inter_zone_gb", "gcp.transfer.inter_zone", 1.0),
    ],
}


@dataclass(frozen=True)
class UsageLine:
    """One usage-priced quantity of one resource (or of the stack, for data transfer)."""

    urn: str | None
    name: str
    type: str
    usage_key: str
    rate_key: str
    scale: float  # catalog units per unit of usage_key (per month)
    quantity: float | None = None  # monthly, from the usage file

    @property
    def _rate(self):
        rate = resource_rate(self.rate_key)
        assert rate is not None, self.rate_key  # the SPECS tables name catalog rows only
        return rate

    @property
    def usd_per_unit(self) -> float:
        """USD per unit of usage_key (reference region)."""
        rate = self._rate
        usd = rate.usd[rate.reference_region] * self.scale
        return usd * HOURS_PER_MONTH if rate.unit.endswith("-hour") else usd

    @property
    def monthly_usd(self) -> float | None:
        return None if self.quantity is None else round(self.quantity * self.usd_per_unit, 4)

    def as_json(self) -> dict[str, Any]:
        rate = self._rate
        out: dict[str, Any] = {
            "urn": self.urn,
            "name": self.name,
            "type": self.type,
            "usage_key": self.usage_key,
            "usd_per_unit": round(self.usd_per_unit, 10),
            "unit": f"{self.usage_key} (monthly)",
            "rate": f"${rate.usd[rate.reference_region]:g}/{rate.unit} {rate.reference_region}",
            "source": rate.source,
            "as_of": rate.as_of.isoformat(),
        }
        if self.quantity is not None:
            out["quantity"] = self.quantity
            out["monthly_usd"] = self.monthly_usd
        return out


def _specs(resource: Any) -> list[tuple[str, str, float]]:
    if resource.type == "aws:lambda/function:Function":
        arch = (resource.props.get("architectures") or ["x86_64"])[0]
        arch = arch if arch in ("x86_64", "arm64") else "x86_64"
        return [
            ("monthly_requests", "aws.lambda.requests", 1e-6),
            ("monthly_gb_seconds", f"aws.lambda.duration.{arch}", 1.0),
        ]
    if resource.type == "gcp:cloudfunctionsv2/function:Function":
        # Billed as Cloud Run: requests, and vCPU- and GiB-seconds while a request runs.
        return [
            ("monthly_requests", "gcp.cloud_run.requests", 1e-6),
            ("monthly_vcpu_seconds", "gcp.cloud_run.cpu", 1.0),
            ("monthly_gib_seconds", "gcp.cloud_run.memory", 1.0),
        ]
    if resource.type == "aws:ec2/vpcEndpoint:VpcEndpoint":
        if (resource.props.get("vpcEndpointType") or "Gateway") == "Gateway":
            return []
        return [("monthly_data_processed_gb", "aws.vpc_endpoint.interface.processed", 1.0)]
    if resource.type in ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer"):
        kind = resource.props.get("loadBalancerType") or "application"
        key = {"application": "aws.alb.lcu", "network": "aws.nlb.lcu"}.get(kind)
        # capacity_units: the average LCUs per hour over the month
        return [("capacity_units", key, 1.0)] if key else []
    if resource.type == "gcp:artifactregistry/repository:Repository":
        # A virtual repository stores nothing (its upstreams bill); standard and remote ones store.
        if resource.props.get("mode") == "VIRTUAL_REPOSITORY":
            return []
        return [("storage_gb", "gcp.artifact_registry.storage", 1.0)]
    return SPECS.get(resource.type, [])


def usage_lines(resources: Sequence[Any]) -> list[UsageLine]:
    """Every usage-priced quantity of the stack, without quantities."""
    lines: list[UsageLine] = []
    clouds: set[str] = set()
    for r in resources:
        head = r.type.split(":", 1)[0]
        if head in _TRANSFER:
            clouds.add(head)
        for key, rate_key, scale in _specs(r):
            lines.append(UsageLine(r.urn, r.name, r.type, key, rate_key, scale))
    for cloud in sorted(clouds):
        for key, rate_key, scale in _TRANSFER[cloud]:
            lines.append(UsageLine(None, DATA_TRANSFER, "data transfer", key, rate_key, scale))
    return lines


def read_usage_file(path: Path) -> Mapping[str, Any]:
    """The file's `resource_usage` mapping (YAML or JSON); InputError naming the file when malformed."""
    import yaml

    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, "--usage-file")
    except OSError as e:
        raise InputError(f"--usage-file {str(path)!r}: {e.strerror}.") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else bounded_yaml.load(text)
    except RecursionError:
        raise InputError(f"--usage-file {str(path)!r} is nested too deeply to read.") from None
    except (ValueError, yaml.YAMLError) as e:
        raise InputError(f"--usage-file {str(path)!r} is not valid YAML/JSON: {e}") from None
    usage = data.get("resource_usage") if isinstance(data, Mapping) else None
    if not isinstance(usage, Mapping):
        raise InputError(
            f"--usage-file {str(path)!r} must hold a mapping `resource_usage: {{<resource name>: "
            "{<usage key>: <monthly quantity>}}`."
        )
    return usage


def apply_usage(
    lines: Sequence[UsageLine], usage: Mapping[str, Any], where: str = "usage file"
) -> list[UsageLine]:
    """lines with the quantities usage gives; InputError for a name, key or quantity the stack cannot take."""
    by_name: dict[str, list[int]] = {}
    for n, line in enumerate(lines):
        for ref in {line.name, line.urn} - {None}:
            by_name.setdefault(str(ref), []).append(n)
    out = list(lines)
    for name, quantities in usage.items():
        if str(name) not in by_name:
            hits = close_matches(str(name), sorted({line.name for line in lines}))
            hint = (
                f"close matches: {', '.join(hits)}"
                if hits
                else "it names no usage-priced resource of the stack"
            )
            raise InputError(f"{where}: resource {name!r} is not in the plan; {hint}.")
        if not isinstance(quantities, Mapping):
            raise InputError(f"{where}: resource {name!r} must map usage keys to monthly quantities.")
        mine = {lines[n].usage_key: n for n in by_name[str(name)]}
        for key, value in quantities.items():
            if key not in mine:
                allowed = ", ".join(sorted(mine))
                raise InputError(f"{where}: resource {name!r} has no usage key {key!r}; allowed: {allowed}.")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise InputError(f"{where}: {name}.{key} = {value!r}; must be a non-negative number.")
            out[mine[key]] = replace(out[mine[key]], quantity=float(value))
    return out
