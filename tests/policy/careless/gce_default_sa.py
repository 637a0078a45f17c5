"""A GPU VM running as the default service account with the cloud-platform scope."""

import pulumi_gcp as gcp
from _common import DEFAULT_SA, LABELS

gcp.compute.Instance(
    "gpu",
    machine_type="g2-standard-4",
    zone="us-central1-a",
    labels={**LABELS, "auto-shutdown": "false"},
    boot_disk={"initialize_params": {"image": "debian-cloud/debian-12"}},
    network_interfaces=[{"network": "default"}],
    scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
    service_account={"email": DEFAULT_SA, "scopes": ["https://www.googleapis.com/auth/cloud-platform"]},
)
