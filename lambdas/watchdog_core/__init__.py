"""The idle watchdogs' shared core: settings parsing, the measurement window, the decision rules, the
run loop, the report and the price table, for the AWS Lambda (`lambdas/idle_gpu_watchdog/`) and the
GCP Cloud Run function (`lambdas/gcp_idle_watchdog/`).

Each cloud keeps what only it knows (listing its machines, reading their metrics, stopping them,
where its notice goes) behind `loop.Cloud`. Standard library only: both archives ship this package
next to their function's package, under the common parent `lambdas/`, and the functions import it
relatively (`from ..watchdog_core import ...`), so the same code runs installed
(`inference_infra.lambdas`) and unpacked (`lambdas`).
"""
