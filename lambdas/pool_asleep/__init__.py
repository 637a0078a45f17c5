"""The pool-asleep responder: an Application Load Balancer Lambda target that answers 503 with
`Retry-After` while an elastic pool is at zero outside working hours.

Deployed by `inference_infra.components.aws.OffHours`; the entry point is
`pool_asleep.handler.handler`. Standard library only: this package ships alone.
"""
