"""The internet in two halves on a GCP firewall, split across two rules of one network."""

import pulumi_gcp as gcp

network = gcp.compute.Network("net", auto_create_subnetworks=False)
for half, block in (("low", "0.0.0.0/1"), ("high", "128.0.0.0/1")):
    gcp.compute.Firewall(
        f"vllm-{half}",
        network=network.id,
        source_ranges=[block],
        target_tags=["gpu"],
        allows=[{"protocol": "tcp", "ports": ["8000"]}],
    )
