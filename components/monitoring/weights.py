"""The weights alert: a node refused the model weights it was given (tampered, missing, not the pinned
manifest, a refused format). The same on both clouds.

Every node's verifier (components/models/verify_weights.py) writes the node exporter textfile gauge
`inference_model_verification_failed{directory="<model folder>"}`: 1 when the last verification of that
folder failed, 0 when it passed. A node that refuses its weights does not serve them, so nothing else
alerts: the engines never start and the endpoint just has fewer targets. This rule makes it page.
"""

from __future__ import annotations

from typing import Any

from inference_infra.components.monitoring.alerts import Alert, Category, Severity, render

WEIGHTS_GROUP = "inference-infra-weights"
VERIFICATION_GAUGE = "inference_model_verification_failed"
WEIGHTS_ALERT_NAMES = ("ModelVerificationFailed",)


def weights_alerts() -> list[Alert]:
    return [
        Alert(
            name="ModelVerificationFailed",
            group=WEIGHTS_GROUP,
            severity=Severity.CRITICAL,
            category=Category.HEALTH,
            expr=f"{VERIFICATION_GAUGE} > 0",
            for_minutes=0,
            summary="Model weights refused on {{ $labels.instance }}",
            description="The node {{ $labels.instance }} refused the weights in "
            "{{ $labels.directory }}: a file differs from the pinned manifest, is missing or "
            "unlisted, is of a refused format, or "
            "the manifest itself is not the pinned one. Its engines do not start. Someone may have "
            "written the model bucket: the node's journal (the prefetch or verify unit) names the file.",
            when=f"a node's `{VERIFICATION_GAUGE}` gauge is 1 (its weights were refused), at once",
        )
    ]


def weights_alert_rules(runbook_url: str) -> list[dict[str, Any]]:
    return render(weights_alerts(), runbook_url)


def weights_rule_group(runbook_url: str) -> dict[str, Any]:
    return {"name": WEIGHTS_GROUP, "rules": weights_alert_rules(runbook_url)}
