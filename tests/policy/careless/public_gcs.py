"""A GCS bucket that grants allUsers object admin."""

import pulumi_gcp as gcp
from _common import LABELS

bucket = gcp.storage.Bucket("weights", location="US", labels=LABELS, uniform_bucket_level_access=True)
gcp.storage.BucketIAMMember(
    "everyone-admin", bucket=bucket.name, role="roles/storage.objectAdmin", member="allUsers"
)
