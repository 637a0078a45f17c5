"""The idle watchdog on GCP: stops GPU VMs and TPU VMs that are provably idle.

Deployed by `inference_infra.components.gcp.IdleGpuWatchdog` as a Cloud Run function (gen2); the
archive's `main.py` imports the entry point `handler` from `lambdas.gcp_idle_watchdog.handler`.
Standard library plus Google's client libraries over REST (google-cloud-compute, google-cloud-tpu,
google-api-python-client for Cloud Monitoring, google-auth for Pub/Sub; `requirements.txt`): the
function's source archive holds this package and the shared core it imports
(`lambdas/watchdog_core/`), both under `lambdas/`, with the AWS watchdog's contract
(`lambdas/idle_gpu_watchdog/`).
"""
