"""Model weights: the SHA-256 manifest that every node verifies before it serves."""
