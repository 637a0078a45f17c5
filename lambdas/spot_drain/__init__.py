"""The spot-drain Lambda: takes a Spot instance out of its target groups before EC2 reclaims it.

Deployed by `inference_infra.components.aws.SpotDrain`; the entry point is
`spot_drain.handler.handler`, invoked by EventBridge rules for "EC2 Spot Instance
Interruption Warning" and "EC2 Instance Rebalance Recommendation". Standard library and
boto3 only: this package ships alone in the Lambda archive.
"""
