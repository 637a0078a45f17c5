"""The idle-GPU watchdog Lambda: stops accelerator instances that are provably idle.

Deployed by `inference_infra.components.aws.IdleGpuWatchdog`; the entry point is
`lambdas.idle_gpu_watchdog.handler.handler`. Standard library and boto3 only: the
Lambda archive holds this package and the shared core it imports
(`lambdas/watchdog_core/`), both under `lambdas/`.
"""
