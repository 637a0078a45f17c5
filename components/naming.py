"""Cloud names the domain checks as well as the components: regions, zones and GCP labels (pure).

The monitoring settings (scrape discovery) and the cost tags check these without importing a
cloud's components; `components.aws.names` and `components.gcp.names` use the same rules.
"""

from __future__ import annotations

import re

# Commercial, GovCloud and ISO partitions: us-east-1, us-gov-west-1, us-isob-east-1.
_AWS_REGION_RE = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
_GCP_ZONE_RE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")
_GCP_REGION_RE = re.compile(r"^[a-z]+-[a-z]+\d+$")
_GCP_LABEL_KEY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_GCP_LABEL_VALUE_RE = re.compile(r"^[a-z0-9_-]{0,63}$")


def is_aws_region(value: str) -> bool:
    """'us-east-1', 'us-gov-west-1', 'us-isob-east-1'."""
    return bool(_AWS_REGION_RE.fullmatch(value))


def is_gcp_region(value: str) -> bool:
    """'us-central1'."""
    return bool(_GCP_REGION_RE.fullmatch(value))


def is_gcp_zone(value: str) -> bool:
    """'us-central1-a'."""
    return bool(_GCP_ZONE_RE.fullmatch(value))


def is_gcp_label_key(value: str) -> bool:
    """Lower-case letters, digits, '_' and '-', starting with a letter, at most 63 characters."""
    return bool(_GCP_LABEL_KEY_RE.fullmatch(value))


def is_gcp_label_value(value: str) -> bool:
    """Lower-case letters, digits, '_' and '-', at most 63 characters (empty allowed)."""
    return bool(_GCP_LABEL_VALUE_RE.fullmatch(value))
