"""Units every price conversion shares (standard library only).

Standard library only, so the catalog's build (`components/catalog/build.py`, run as a file that must
not load the tables it rewrites) reads the same month as the pricing, the plan, the budget policy and
the dashboards.
"""

from __future__ import annotations

# Hours in a billing month, as AWS's and Google's price lists turn monthly rates into hourly ones
# (365 x 24 / 12 = 730, rounded); Cyclenerd's GCP pricing.yml uses the same month.
HOURS_PER_MONTH = 730
