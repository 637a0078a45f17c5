"""Spot prices by instance type and region: a dated snapshot, replacing a flat discount per cloud.

Spot prices differ by type, region and availability zone, and move by the
hour. The snapshot records, per type and region, the spot price of every
availability zone the source listed on the snapshot date; a plan prices spot
capacity at the **highest** of them (a fleet may land in any zone, and a budget
should not be surprised), and its basis names the snapshot date.

A type or region the snapshot has no figure for is **not guessed**: the plan
prices it at on-demand (the most spot can cost) and its basis says that the
snapshot has no data. Extending the snapshot means adding rows read from one
source on one date; a new snapshot date replaces ``SNAPSHOT_DATE``.

Sources (each row names its own and the date it was read):

* AWS: the spot price history as published in SkyPilot's catalog
  (``catalogs/v8/aws/vms.csv``, column ``SpotPrice`` per availability-zone id),
  commit 00148f2af3672e2229b4f7bf8157d5a3f36e3c35. The g5/g6/g6e rows were read
  on 2026-11-22; the inf2/trn1/trn1n, P-family and further g6e rows from the
  same commit on 2026-11-24, when the g6e.xlarge us-east-1 row was found to lack
  one of its four zones (use1-az1, the highest) and was corrected. Not in the
  snapshot: g4dn and the g5/g6 sizes not listed, g6e.4xlarge and g6e.48xlarge
  (not read), p4d (not read), p5.4xlarge (the source lists no spot price in
  us-east-1 or us-west-2), p5e in us-east-1 (none listed).
* AWS CPU machines: the same file and commit, read 2026-11-24, for the sizes
  read in us-east-1 and us-west-2: c5 and c6i large/xlarge, c7g medium/large,
  c7i large/4xlarge/8xlarge, m5 large to 8xlarge, m5a large to 12xlarge, m6g
  medium/large/8xlarge, m6i large/4xlarge/8xlarge/12xlarge, m7i xlarge, r5
  xlarge/12xlarge, t3 nano/micro/medium/xlarge, t3a micro/medium/large/2xlarge.
  Not read (priced at on-demand, saying so): every other size and family of
  the CPU machine table, among them r6i, m7g, t2, t3.small/large and
  m6i.xlarge.
* GCE CPU machines: the GCP catalog below, read 2026-11-24, for us-central1,
  us-east1 and us-east4: e2-standard-2/4/8/32, e2-highcpu-8, e2-highmem-16,
  n2-standard-4/8/32/64/96, n2d-highcpu-8/64. Not used: the shared-core
  e2-micro/small/medium (the catalog prices them as full vCPUs). Not read: c3,
  n2-standard-2 and the other shapes and sizes.
* GCP machine types: SkyPilot's GCP catalog (``catalogs/v8/gcp/vms.csv``,
  commit 006059e0f18acb1341e22a27751e9f80df6ba92f, read 2026-11-24), which
  lists a GPU machine's VM part (vCPUs and memory) and its GPUs as separate
  rows, as Google bills them; a machine's spot price here is the VM row plus
  its GPUs' rows, and `notes` shows the sum. GCP prices spot per region (the
  source's zones of a region agree), so GCP rows carry one figure. Not in the
  snapshot: a3-highgpu-4g in us-central1 (its VM row was not read).
* N1 VMs and the GPUs attached to them: the same GCP catalog's VM and
  accelerator rows, priced separately as Google bills them.
* TPU slices: the v5e rows in us-central1 come from Google's TPU pricing page
  ($0.60 per chip-hour, read 2026-11-21; SkyPilot's catalog says $0.245 there,
  and the higher published figure is kept); v5e in us-east5, v5p and v6e from
  SkyPilot's GCP catalog. Not in the snapshot: v4 (us-central2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from functools import cache

from inference_infra.components.catalog.types import Cloud

SNAPSHOT_DATE = date(2026, 11, 24)  # the latest read; each row carries its own date
_SKYPILOT_AWS = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/00148f2af3672e2229b4f7bf8157d5a3f36e3c35/"
    "catalogs/v8/aws/vms.csv"
)


@dataclass(frozen=True, kw_only=True)
class SpotRow:
    cloud: Cloud
    name: str  # instance / machine type
    region: str
    zone_usd: tuple[float, ...]  # spot USD per hour in each zone the source listed
    source: str
    as_of: date
    notes: str = ""  # how the figure was put together, when it is not one source row
    zones: tuple[str, ...] = ()  # the zone ids of zone_usd, where recorded (AWS: use1-az1, ...)

    @property
    def highest_usd(self) -> float:
        return max(self.zone_usd)

    def zone_usd_of(self, zone_id: str) -> float | None:
        """The figure of one zone (by AWS zone id), or None when the row does not record that zone."""
        if zone_id in self.zones:
            return self.zone_usd[self.zones.index(zone_id)]
        return None


_FIRST_READ = date(2026, 11, 22)  # the g5/g6/g6e rows
_READ = date(2026, 11, 24)  # everything added since


def _aws(name: str, region: str, *zone_usd: float, as_of: date = _FIRST_READ) -> SpotRow:
    return SpotRow(
        cloud=Cloud.AWS,
        name=name,
        region=region,
        zone_usd=zone_usd,
        source=_SKYPILOT_AWS,
        as_of=as_of,
    )


SPOT_SNAPSHOT: tuple[SpotRow, ...] = (
    _aws("g5.xlarge", "us-east-1", 0.4507, 0.4246, 0.4360, 0.4259, 0.4364),
    _aws("g5.xlarge", "us-west-2", 0.4857, 0.5134, 0.4829),
    _aws("g5.2xlarge", "us-east-1", 0.5218, 0.5933, 0.5036, 0.4738, 0.4985),
    _aws("g5.2xlarge", "us-west-2", 0.3727, 0.4155, 0.4119),
    _aws("g5.8xlarge", "us-east-1", 0.9401, 0.9643, 0.8391, 0.9641, 0.9228),
    _aws("g5.8xlarge", "us-west-2", 0.9241, 0.9322, 0.9206),
    _aws("g5.48xlarge", "us-east-1", 4.5408, 7.0077, 6.8918, 5.8671, 5.6899),
    _aws("g5.48xlarge", "us-west-2", 7.8564, 8.0904, 7.7435),
    _aws("g6.xlarge", "us-east-1", 0.4011, 0.3653, 0.3490, 0.3988),
    _aws("g6.xlarge", "us-west-2", 0.4250, 0.4537, 0.3900, 0.4541),
    # use1-az1 (1.1975) was missing from the first read of this row; added on 2026-11-24.
    _aws("g6e.xlarge", "us-east-1", 1.1975, 0.9154, 0.9599, 1.0492, as_of=_READ),
    _aws("g6e.xlarge", "us-west-2", 0.9228, 0.7201, 0.6538, 1.5145),
    _aws("g6e.12xlarge", "us-east-1", 3.7887, 5.6426, 4.9101, 6.0150),
    _aws("g6e.12xlarge", "us-west-2", 6.4585, 3.7322, 4.2304, 3.1053),
)


# AWS Neuron machines (same source and commit, read 2026-11-24)
SPOT_SNAPSHOT += (
    _aws("inf2.xlarge", "us-east-1", 0.1614, 0.1783, 0.1318, 0.1152, as_of=_READ),
    _aws("inf2.xlarge", "us-west-2", 0.1781, 0.1844, 0.1425, 0.2114, as_of=_READ),
    _aws("inf2.8xlarge", "us-east-1", 0.5708, 0.5518, 0.4479, 0.5205, as_of=_READ),
    _aws("inf2.8xlarge", "us-west-2", 0.4558, 0.5983, 0.4975, 0.4383, as_of=_READ),
    _aws("inf2.24xlarge", "us-east-1", 1.6792, 1.9416, 1.8057, 1.8854, as_of=_READ),
    _aws("inf2.24xlarge", "us-west-2", 1.5637, 1.6225, 1.4033, 1.7600, as_of=_READ),
    _aws("inf2.48xlarge", "us-east-1", 6.6821, 4.5781, 6.9195, 4.1929, as_of=_READ),
    _aws("inf2.48xlarge", "us-west-2", 2.2706, 2.4469, 2.2636, 2.9106, as_of=_READ),
    _aws("g6e.2xlarge", "us-east-1", 1.0895, 0.8952, 0.9408, 0.8064, as_of=_READ),
    _aws("g6e.2xlarge", "us-west-2", 0.948, 1.4793, 1.6578, 1.0203, as_of=_READ),
    _aws("g6e.8xlarge", "us-east-1", 1.4119, 1.363, 1.2929, 1.2495, as_of=_READ),
    _aws("g6e.8xlarge", "us-west-2", 1.5665, 1.6674, 1.5865, 1.4936, as_of=_READ),
    _aws("g6e.16xlarge", "us-east-1", 1.8831, 1.6958, 1.4678, 1.582, as_of=_READ),
    _aws("g6e.16xlarge", "us-west-2", 2.5887, 2.551, 2.6431, 2.4627, as_of=_READ),
    _aws("g6e.24xlarge", "us-east-1", 5.3367, 5.7615, 5.1278, 5.5383, as_of=_READ),
    _aws("g6e.24xlarge", "us-west-2", 5.3328, 5.6908, 5.292, 4.8261, as_of=_READ),
    _aws("trn1.2xlarge", "us-east-1", 0.2198, 0.2482, as_of=_READ),
    _aws("trn1.2xlarge", "us-west-2", 0.2564, 0.2298, as_of=_READ),
    _aws("trn1.32xlarge", "us-east-1", 6.1428, 4.1506, 2.4334, as_of=_READ),
    _aws("trn1.32xlarge", "us-west-2", 3.7169, 3.6770, as_of=_READ),
    _aws("trn1n.32xlarge", "us-east-1", 2.7033, as_of=_READ),
    _aws("trn1n.32xlarge", "us-west-2", 4.2537, as_of=_READ),
    # P-family GPU machines, same commit, read 2026-11-24. Local Zones (use1-atl2-az1) are left out:
    # a fleet in us-east-1 lands in its ordinary zones. Two us-east-1 zones list p5.48xlarge spot at
    # the on-demand rate, so its highest zone there is on-demand.
    _aws("p4de.24xlarge", "us-east-1", 9.9734, 8.6505, as_of=_READ),
    _aws("p4de.24xlarge", "us-west-2", 10.9991, 11.0144, 10.3338, as_of=_READ),
    _aws("p5.48xlarge", "us-east-1", 55.04, 19.2531, 21.1543, 55.04, 25.7522, 17.6289, as_of=_READ),
    _aws("p5.48xlarge", "us-west-2", 12.6935, 12.9785, 12.9727, 16.1301, as_of=_READ),
    _aws("p5e.48xlarge", "us-west-2", 19.5387, as_of=_READ),
    _aws("p5en.48xlarge", "us-east-1", 18.2492, 16.5551, as_of=_READ),
    _aws("p5en.48xlarge", "us-west-2", 23.893, 15.482, 18.3464, as_of=_READ),
    _aws("p6-b200.48xlarge", "us-east-1", 21.0148, as_of=_READ),
    _aws("p6-b200.48xlarge", "us-west-2", 28.442, 25.106, 23.0826, as_of=_READ),
)


# CPU machines (same source and commit, read 2026-11-24): the sizes read of the common families, each
# region's ordinary zones in zone-id order (Local Zones such as use1-atl2-az1 and usw2-lax1-az1 left
# out, as above).
SPOT_SNAPSHOT += (
    _aws("c5.large", "us-east-1", 0.0356, 0.0362, 0.0396, 0.0389, 0.0352, as_of=_READ),
    _aws("c5.large", "us-west-2", 0.0338, 0.0337, 0.0322, 0.0235, as_of=_READ),
    _aws("c5.xlarge", "us-east-1", 0.0889, 0.084, 0.0832, 0.081, 0.0704, as_of=_READ),
    _aws("c5.xlarge", "us-west-2", 0.0763, 0.0816, 0.0862, 0.0681, as_of=_READ),
    _aws("c6i.large", "us-east-1", 0.0385, 0.0379, 0.0469, 0.0364, 0.0368, as_of=_READ),
    _aws("c6i.large", "us-west-2", 0.0389, 0.0378, 0.0392, 0.0394, as_of=_READ),
    _aws("c6i.xlarge", "us-east-1", 0.0656, 0.0669, 0.0754, 0.0648, 0.0681, as_of=_READ),
    _aws("c6i.xlarge", "us-west-2", 0.0869, 0.0806, 0.0911, 0.0795, as_of=_READ),
    _aws("c7g.medium", "us-east-1", 0.0197, 0.0213, 0.0189, 0.0144, 0.0177, as_of=_READ),
    _aws("c7g.medium", "us-west-2", 0.0134, 0.0131, 0.0139, 0.0105, as_of=_READ),
    _aws("c7g.large", "us-east-1", 0.0631, 0.0576, 0.0529, 0.0386, 0.0428, as_of=_READ),
    _aws("c7g.large", "us-west-2", 0.0405, 0.0376, 0.0455, 0.0321, as_of=_READ),
    _aws("c7i.large", "us-east-1", 0.0358, 0.041, 0.0363, 0.0354, 0.0376, as_of=_READ),
    _aws("c7i.large", "us-west-2", 0.0406, 0.0439, 0.0433, 0.0311, as_of=_READ),
    _aws("c7i.4xlarge", "us-east-1", 0.3384, 0.3362, 0.3299, 0.2636, 0.3173, as_of=_READ),
    _aws("c7i.4xlarge", "us-west-2", 0.3327, 0.3471, 0.4109, 0.2712, as_of=_READ),
    _aws("c7i.8xlarge", "us-east-1", 0.5712, 0.5425, 0.5454, 0.533, 0.5607, as_of=_READ),
    _aws("c7i.8xlarge", "us-west-2", 0.5381, 0.6398, 0.6069, 0.5765, as_of=_READ),
    _aws("m5.large", "us-east-1", 0.0375, 0.0364, 0.0453, 0.0319, 0.0398, as_of=_READ),
    _aws("m5.large", "us-west-2", 0.0463, 0.0437, 0.0431, 0.0422, as_of=_READ),
    _aws("m5.xlarge", "us-east-1", 0.0601, 0.064, 0.0669, 0.0615, 0.0638, as_of=_READ),
    _aws("m5.xlarge", "us-west-2", 0.0735, 0.0578, 0.0721, 0.0773, as_of=_READ),
    _aws("m5.2xlarge", "us-east-1", 0.1398, 0.1519, 0.1499, 0.1465, 0.1614, as_of=_READ),
    _aws("m5.2xlarge", "us-west-2", 0.1807, 0.183, 0.1874, 0.1777, as_of=_READ),
    _aws("m5.4xlarge", "us-east-1", 0.261, 0.2951, 0.313, 0.2725, 0.3222, as_of=_READ),
    _aws("m5.4xlarge", "us-west-2", 0.3284, 0.3396, 0.3253, 0.3303, as_of=_READ),
    _aws("m5.8xlarge", "us-east-1", 0.4864, 0.495, 0.4955, 0.4573, 0.4894, as_of=_READ),
    _aws("m5.8xlarge", "us-west-2", 0.5128, 0.6034, 0.5558, 0.4852, as_of=_READ),
    _aws("m5a.large", "us-east-1", 0.0404, 0.0397, 0.0443, 0.0432, 0.0458, as_of=_READ),
    _aws("m5a.large", "us-west-2", 0.0369, 0.0492, 0.0363, 0.0349, as_of=_READ),
    _aws("m5a.xlarge", "us-east-1", 0.0823, 0.0921, 0.0893, 0.0805, 0.0894, as_of=_READ),
    _aws("m5a.xlarge", "us-west-2", 0.0987, 0.0974, 0.0916, 0.0843, as_of=_READ),
    _aws("m5a.2xlarge", "us-east-1", 0.1376, 0.1632, 0.1822, 0.1817, 0.2349, as_of=_READ),
    _aws("m5a.2xlarge", "us-west-2", 0.1753, 0.1666, 0.1686, 0.1772, as_of=_READ),
    _aws("m5a.4xlarge", "us-east-1", 0.3308, 0.3094, 0.3517, 0.3279, 0.4295, as_of=_READ),
    _aws("m5a.4xlarge", "us-west-2", 0.342, 0.3664, 0.3409, 0.3673, as_of=_READ),
    _aws("m5a.8xlarge", "us-east-1", 0.6473, 0.6299, 0.6658, 0.683, 0.7367, as_of=_READ),
    _aws("m5a.8xlarge", "us-west-2", 0.5859, 0.6191, 0.5589, 0.5676, as_of=_READ),
    _aws("m5a.12xlarge", "us-east-1", 0.901, 0.7803, 0.911, 1.0577, 1.1128, as_of=_READ),
    _aws("m5a.12xlarge", "us-west-2", 0.818, 0.8586, 0.8425, 0.9625, as_of=_READ),
    _aws("m6g.medium", "us-east-1", 0.0126, 0.0148, 0.0122, 0.0101, 0.0135, as_of=_READ),
    _aws("m6g.medium", "us-west-2", 0.0139, 0.0136, 0.0132, 0.01, as_of=_READ),
    _aws("m6g.large", "us-east-1", 0.0399, 0.0376, 0.0322, 0.0328, 0.0348, as_of=_READ),
    _aws("m6g.large", "us-west-2", 0.0295, 0.0281, 0.031, 0.0256, as_of=_READ),
    _aws("m6g.8xlarge", "us-east-1", 0.8408, 0.5748, 0.4237, 0.5867, 0.4671, as_of=_READ),
    _aws("m6g.8xlarge", "us-west-2", 0.5239, 0.4991, 0.4778, 0.4057, as_of=_READ),
    _aws("m6i.large", "us-east-1", 0.0397, 0.0352, 0.0369, 0.0379, 0.0389, as_of=_READ),
    _aws("m6i.large", "us-west-2", 0.0433, 0.0415, 0.045, 0.0351, as_of=_READ),
    _aws("m6i.4xlarge", "us-east-1", 0.3558, 0.2586, 0.2406, 0.2424, 0.2471, as_of=_READ),
    _aws("m6i.4xlarge", "us-west-2", 0.2482, 0.2522, 0.3095, 0.3484, as_of=_READ),
    _aws("m6i.8xlarge", "us-east-1", 0.6188, 0.5091, 0.4368, 0.4501, 0.4569, as_of=_READ),
    _aws("m6i.8xlarge", "us-west-2", 0.4967, 0.5163, 0.5171, 0.5953, as_of=_READ),
    _aws("m6i.12xlarge", "us-east-1", 0.9708, 0.797, 0.6281, 0.7337, 0.6364, as_of=_READ),
    _aws("m6i.12xlarge", "us-west-2", 0.8338, 0.9325, 0.928, 0.9489, as_of=_READ),
    _aws("m7i.xlarge", "us-east-1", 0.085, 0.0816, 0.089, 0.0845, 0.0858, as_of=_READ),
    _aws("m7i.xlarge", "us-west-2", 0.0831, 0.0986, 0.087, 0.0821, as_of=_READ),
    _aws("r5.xlarge", "us-east-1", 0.0881, 0.076, 0.0839, 0.0864, 0.0894, as_of=_READ),
    _aws("r5.xlarge", "us-west-2", 0.0891, 0.0911, 0.0891, 0.0911, as_of=_READ),
    _aws("r5.12xlarge", "us-east-1", 1.003, 0.9566, 0.8988, 0.9242, 1.1341, as_of=_READ),
    _aws("r5.12xlarge", "us-west-2", 0.994, 0.9942, 1.0491, 1.1815, as_of=_READ),
    _aws("t3.nano", "us-east-1", 0.0016, 0.0015, 0.0016, 0.0018, 0.0016, as_of=_READ),
    _aws("t3.nano", "us-west-2", 0.0017, 0.0018, 0.0019, 0.0016, as_of=_READ),
    _aws("t3.micro", "us-east-1", 0.0051, 0.0045, 0.0049, 0.0043, 0.0047, as_of=_READ),
    _aws("t3.micro", "us-west-2", 0.0048, 0.0048, 0.0043, 0.004, as_of=_READ),
    _aws("t3.medium", "us-east-1", 0.0203, 0.0196, 0.017, 0.0189, 0.0191, as_of=_READ),
    _aws("t3.medium", "us-west-2", 0.0221, 0.0204, 0.0189, 0.0194, as_of=_READ),
    _aws("t3.xlarge", "us-east-1", 0.0709, 0.0785, 0.0821, 0.065, 0.0742, as_of=_READ),
    _aws("t3.xlarge", "us-west-2", 0.0735, 0.0827, 0.0732, 0.0693, as_of=_READ),
    _aws("t3a.micro", "us-east-1", 0.0051, 0.0046, 0.0051, 0.0047, 0.0051, as_of=_READ),
    _aws("t3a.micro", "us-west-2", 0.0048, 0.0046, 0.0053, 0.0054, as_of=_READ),
    _aws("t3a.medium", "us-east-1", 0.02, 0.0199, 0.0198, 0.0191, 0.0212, as_of=_READ),
    _aws("t3a.medium", "us-west-2", 0.0155, 0.019, 0.0156, 0.0171, as_of=_READ),
    _aws("t3a.large", "us-east-1", 0.0374, 0.0291, 0.035, 0.032, 0.0297, as_of=_READ),
    _aws("t3a.large", "us-west-2", 0.0341, 0.0359, 0.0348, 0.0322, as_of=_READ),
    _aws("t3a.2xlarge", "us-east-1", 0.1164, 0.1122, 0.117, 0.0869, 0.112, as_of=_READ),
    _aws("t3a.2xlarge", "us-west-2", 0.1054, 0.1188, 0.11, 0.0849, as_of=_READ),
)

_SKYPILOT_GCP = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/006059e0f18acb1341e22a27751e9f80df6ba92f/"
    "catalogs/v8/gcp/vms.csv"
)

# Spot USD per GPU-hour by region, from the GCP catalog's accelerator rows (A100 80GB from its 4- and
# 8-GPU rows; the others from their 1-GPU rows, which the larger rows multiply).
_GPU_SPOT = {
    ("l4", "us-central1"): 0.2231,
    ("l4", "us-east1"): 0.2231,
    ("a100-40gb", "us-central1"): 1.4341,
    ("a100-40gb", "us-east1"): 1.4341,
    ("a100-80gb", "us-central1"): 1.964,
    ("a100-80gb", "us-east4"): 1.7697,
    ("h100-80gb", "us-central1"): 2.9926,
    ("h100-80gb", "us-east4"): 2.2356,
    ("h100-mega", "us-central1"): 3.1601,  # the 8-GPU row, 25.2808 / 8
    ("t4", "us-central1"): 0.175,
    ("t4", "us-east1"): 0.175,
}


def _gce(name: str, region: str, vm_usd: float, gpu: str, gpus: int) -> SpotRow:
    per_gpu = _GPU_SPOT[(gpu, region)]
    return SpotRow(
        cloud=Cloud.GCP,
        name=name,
        region=region,
        zone_usd=(round(vm_usd + gpus * per_gpu, 6),),
        source=_SKYPILOT_GCP,
        as_of=_READ,
        notes=f"VM ${vm_usd:g}/h + {gpus} x {gpu} ${per_gpu:g}/h",
    )


SPOT_SNAPSHOT += (
    # G2 (L4)
    _gce("g2-standard-4", "us-central1", 0.05874, "l4", 1),
    _gce("g2-standard-8", "us-central1", 0.11747, "l4", 1),
    _gce("g2-standard-12", "us-central1", 0.17621, "l4", 1),
    _gce("g2-standard-16", "us-central1", 0.23494, "l4", 1),
    _gce("g2-standard-32", "us-central1", 0.46989, "l4", 1),
    _gce("g2-standard-24", "us-central1", 0.35242, "l4", 2),
    _gce("g2-standard-48", "us-central1", 0.70483, "l4", 4),
    _gce("g2-standard-96", "us-central1", 1.40966, "l4", 8),
    # A2 (A100 40GB / 80GB)
    *(
        _gce(f"a2-highgpu-{n}g", region, vm, "a100-40gb", n)
        for region in ("us-central1", "us-east1")
        for n, vm in ((1, 0.36975), (2, 0.7395), (4, 1.479), (8, 2.958))
    ),
    _gce("a2-megagpu-16g", "us-central1", 4.39824, "a100-40gb", 16),
    *(
        _gce(f"a2-ultragpu-{n}g", "us-central1", vm, "a100-80gb", n)
        for n, vm in ((1, 0.54978), (2, 1.09956), (4, 2.19912), (8, 4.39824))
    ),
    *(
        _gce(f"a2-ultragpu-{n}g", "us-east4", vm, "a100-80gb", n)
        for n, vm in ((1, 0.49613), (2, 0.99226), (4, 1.98452), (8, 3.96904))
    ),
    # A3 (H100)
    _gce("a3-highgpu-1g", "us-central1", 0.36117, "h100-80gb", 1),
    _gce("a3-highgpu-2g", "us-central1", 0.72233, "h100-80gb", 2),
    _gce("a3-highgpu-8g", "us-central1", 2.88933, "h100-80gb", 8),
    _gce("a3-highgpu-1g", "us-east4", 0.26996, "h100-80gb", 1),
    _gce("a3-highgpu-2g", "us-east4", 0.53992, "h100-80gb", 2),
    _gce("a3-highgpu-4g", "us-east4", 1.07983, "h100-80gb", 4),
    _gce("a3-highgpu-8g", "us-east4", 2.15966, "h100-80gb", 8),
    _gce("a3-megagpu-8g", "us-central1", 2.88933, "h100-mega", 8),
)

# N1 VMs (the VM part of an N1 + guest GPU machine; same catalog rows, one figure per region).
SPOT_SNAPSHOT += tuple(
    SpotRow(cloud=Cloud.GCP, name=name, region=region, zone_usd=(usd,), source=_SKYPILOT_GCP, as_of=_READ)
    for region in ("us-central1", "us-east1")
    for name, usd in (
        ("n1-standard-4", 0.05223),
        ("n1-standard-8", 0.10446),
        ("n1-standard-16", 0.20892),
        ("n1-standard-32", 0.41784),
    )
)

# GCE CPU machines (same catalog, read 2026-11-24): us-central1, us-east1, us-east4 (the regions the CPU
# machine table prices), one figure per region (its zones agree). The shared-core e2-micro/small/medium
# are left out: the catalog lists them at full-vCPU prices (e2-medium $0.05532/h on demand in
# us-central1, where Google bills 1 vCPU, $0.0335), so its spot figures for them are not Google's.
SPOT_SNAPSHOT += tuple(
    SpotRow(cloud=Cloud.GCP, name=name, region=region, zone_usd=(usd,), source=_SKYPILOT_GCP, as_of=_READ)
    for name, *figures in (
        ("e2-highcpu-8", 0.08682, 0.08682, 0.10731),
        ("e2-highmem-16", 0.31722, 0.31722, 0.39203),
        ("e2-standard-2", 0.0294, 0.0294, 0.03633),
        ("e2-standard-4", 0.05879, 0.05879, 0.07266),
        ("e2-standard-8", 0.11758, 0.11758, 0.14533),
        ("e2-standard-32", 0.47034, 0.47034, 0.58131),
        ("n2-standard-4", 0.0635, 0.0635, 0.04826),
        ("n2-standard-8", 0.12701, 0.12701, 0.09653),
        ("n2-standard-32", 0.50803, 0.50803, 0.38611),
        ("n2-standard-64", 1.01606, 1.01606, 0.77222),
        ("n2-standard-96", 1.5241, 1.5241, 1.15834),
        ("n2d-highcpu-8", 0.05179, 0.05179, 0.07793),
        ("n2d-highcpu-64", 0.41434, 0.41434, 0.62342),
    )
    for region, usd in zip(("us-central1", "us-east1", "us-east4"), figures, strict=True)
)

# Guest GPUs on N1 VMs, keyed by the GCE accelerator type (per GPU-hour).
SPOT_SNAPSHOT += tuple(
    SpotRow(
        cloud=Cloud.GCP,
        name="nvidia-tesla-t4",
        region=region,
        zone_usd=(_GPU_SPOT[("t4", region)],),
        source=_SKYPILOT_GCP,
        as_of=_READ,
        notes="per GPU",
    )
    for region in ("us-central1", "us-east1")
)


def _tpu_sky(name: str, region: str, slice_usd: float) -> SpotRow:
    return SpotRow(
        cloud=Cloud.GCP, name=name, region=region, zone_usd=(slice_usd,), source=_SKYPILOT_GCP, as_of=_READ
    )


SPOT_SNAPSHOT += (
    *(_tpu_sky(f"v5litepod-{n}", "us-east5", round(0.6 * n, 6)) for n in (1, 4, 8, 16, 32, 64, 128, 256)),
    *(
        _tpu_sky(f"v6e-{n}", "us-central1", usd)
        for n, usd in (
            (1, 0.54421),
            (4, 2.17683),
            (8, 4.35366),
            (16, 8.70733),
            (32, 17.41466),
            (64, 34.82931),
            (128, 69.65862),
            (256, 139.31725),
        )
    ),
    *(_tpu_sky(f"v6e-{n}", "us-east5", round(1.215 * n, 6)) for n in (1, 4, 8, 16, 32, 64, 128, 256)),
    *(
        _tpu_sky(f"v5p-{n}", "us-central1", usd)
        for n, usd in ((8, 3.3428), (16, 6.68561), (32, 13.37122), (64, 26.74243), (128, 53.48486))
    ),
    *(
        _tpu_sky(f"v5p-{n}", "us-east5", usd)
        for n, usd in ((8, 6.72), (16, 13.44), (32, 26.88), (64, 53.76), (128, 107.52))
    ),
)


# Google prices TPU Spot per chip-hour; v5e in us-central1 at $0.60 (the TPU pricing page, read
# 2026-11-21 for the catalog's TPU rows). One figure per region, no zones.
_TPU_PRICES = "https://cloud.google.com/tpu/pricing"


def _tpu(name: str, chips: int, region: str, per_chip: float) -> SpotRow:
    return SpotRow(
        cloud=Cloud.GCP,
        name=name,
        region=region,
        zone_usd=(round(per_chip * chips, 6),),
        source=_TPU_PRICES,
        as_of=date(2026, 11, 21),
    )


SPOT_SNAPSHOT += tuple(
    _tpu(f"v5litepod-{n}", n, "us-central1", 0.60) for n in (1, 4, 8, 16, 32, 64, 128, 256)
)


# The zone ids of the AWS accelerator rows above: the same SkyPilot file and commit lists each figure
# with its AvailabilityZone (a zone id, the same in every account), and every row above holds its
# figures in zone-id order with Local Zones left out; the i-th id is the i-th figure's zone. Matched
# figure for figure against that file on 2026-11-26. The CPU rows' zones were not recorded.
_AWS_ZONE_IDS: dict[tuple[str, str], str] = {
    ("g5.xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az5 use1-az6",
    ("g5.xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3",
    ("g5.2xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az5 use1-az6",
    ("g5.2xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3",
    ("g5.8xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az5 use1-az6",
    ("g5.8xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3",
    ("g5.48xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az5 use1-az6",
    ("g5.48xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3",
    ("g6.xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6.xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.12xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.12xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("inf2.xlarge", "us-east-1"): "use1-az2 use1-az4 use1-az5 use1-az6",
    ("inf2.xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("inf2.8xlarge", "us-east-1"): "use1-az2 use1-az4 use1-az5 use1-az6",
    ("inf2.8xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("inf2.24xlarge", "us-east-1"): "use1-az2 use1-az4 use1-az5 use1-az6",
    ("inf2.24xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("inf2.48xlarge", "us-east-1"): "use1-az2 use1-az4 use1-az5 use1-az6",
    ("inf2.48xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.2xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.2xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.8xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.8xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.16xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.16xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("g6e.24xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az4 use1-az6",
    ("g6e.24xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("trn1.2xlarge", "us-east-1"): "use1-az5 use1-az6",
    ("trn1.2xlarge", "us-west-2"): "usw2-az1 usw2-az4",
    ("trn1.32xlarge", "us-east-1"): "use1-az4 use1-az5 use1-az6",
    ("trn1.32xlarge", "us-west-2"): "usw2-az1 usw2-az4",
    ("trn1n.32xlarge", "us-east-1"): "use1-az6",
    ("trn1n.32xlarge", "us-west-2"): "usw2-az4",
    ("p4de.24xlarge", "us-east-1"): "use1-az4 use1-az6",
    ("p4de.24xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3",
    ("p5.48xlarge", "us-east-1"): "use1-az1 use1-az2 use1-az3 use1-az4 use1-az5 use1-az6",
    ("p5.48xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az3 usw2-az4",
    ("p5e.48xlarge", "us-west-2"): "usw2-az3",
    ("p5en.48xlarge", "us-east-1"): "use1-az2 use1-az6",
    ("p5en.48xlarge", "us-west-2"): "usw2-az2 usw2-az3 usw2-az4",
    ("p6-b200.48xlarge", "us-east-1"): "use1-az6",
    ("p6-b200.48xlarge", "us-west-2"): "usw2-az1 usw2-az2 usw2-az4",
}
SPOT_SNAPSHOT = tuple(
    replace(r, zones=tuple(_AWS_ZONE_IDS[(r.name, r.region)].split()))
    if r.cloud is Cloud.AWS and (r.name, r.region) in _AWS_ZONE_IDS
    else r
    for r in SPOT_SNAPSHOT
)


@cache
def _rows() -> dict[tuple[Cloud, str, str], SpotRow]:
    return {(r.cloud, r.name, r.region): r for r in SPOT_SNAPSHOT}


def spot_row(cloud: Cloud | str, name: str, region: str | None) -> SpotRow | None:
    """The snapshot's row for a type in a region, or None when the snapshot has no data for it."""
    if region is None:
        return None
    return _rows().get((Cloud(cloud), name, region))
