"""The inference-infra CrossGuard policy pack.

`pulumi preview --policy-pack policy` runs `policy/__main__.py`; `inference-infra plan`
evaluates the same policy objects offline. One policy per module in `policy/rules/`.
"""
