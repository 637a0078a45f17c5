"""The idle watchdog on GCP: stops GPU VMs and TPU VMs that are provably idle.

Deployed by `inference_infra.components.gcp.IdleGpuWatchdog` as a Cloud Run function (gen2); the
entry point is `gcp_idle_watchdog.handler.handler`. Standard library plus Google's client libraries
over REST (google-cloud-compute, google-cloud-tpu, google-api-python-client for Cloud Monitoring,
google-auth for Pub/Sub; `requirements.txt`): this package ships alone in the function's source
archive, with the AWS watchdog's contract (`lambdas/idle_gpu_watchdog/`).
"""
