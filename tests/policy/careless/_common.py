"""What every careless program shares: the cost tags a tidy team would set (kept apart so that
each program shows only its own mistake)."""

TAGS = {"CostCenter": "ml", "Environment": "dev", "Owner": "ml@example.com"}
LABELS = {"cost-center": "ml", "environment": "dev", "owner": "ml_example_com"}
GPU_TAGS = {**TAGS, "AutoShutdown": "false"}
PRIVATE_GPU = {
    "associate_public_ip_address": False,
    "metadata_options": {"http_tokens": "required"},
    "instance_market_options": {"market_type": "spot"},
}
DEFAULT_SA = "123456789012-compute@developer.gserviceaccount.com"
