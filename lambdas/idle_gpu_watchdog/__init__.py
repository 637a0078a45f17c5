"""The idle-GPU watchdog Lambda: stops accelerator instances that are provably idle.

Deployed by `inference_infra.components.aws.IdleGpuWatchdog`; the entry point is
`idle_gpu_watchdog.handler.handler`. Standard library and boto3 only: this
package ships alone in the Lambda archive.
"""
