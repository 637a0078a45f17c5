"""Files that run on GCP GPU and TPU nodes (standard-library Python, Python 3.9+).

The boot script (`components/gcp/startup.py`) writes them from base64 blobs next to the shared
verifier (`components/models/verify_weights.py`), which they import from their own folder; the tests
run them against stand-in commands and loopback servers.
"""
