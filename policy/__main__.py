"""The pack's entry point: `pulumi preview --policy-pack policy` runs this file.

It only assembles the pack. Constructing `PolicyPack` starts the analyzer server
and never returns, so nothing may follow it.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from inference_infra.policy.rules import POLICIES

PolicyPack(
    name="inference-infra",
    description="Cost tags, accelerator guardrails and budgets for AI inference infrastructure.",
    policies=list(POLICIES),
    enforcement_level=EnforcementLevel.ADVISORY,  # each policy sets its own level; see policy/README.md
)
