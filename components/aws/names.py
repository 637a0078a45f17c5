"""AWS name rules shared by the components (pure)."""

from __future__ import annotations

import re

# Commercial, GovCloud and ISO partitions: us-east-1, us-gov-west-1, us-isob-east-1.
_REGION_RE = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")


def is_region(value: str) -> bool:
    return bool(_REGION_RE.match(value))
