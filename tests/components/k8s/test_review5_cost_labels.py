"""Review 5: a Kubernetes pool's cost labels are valid label values whatever the cost tags' letters.

The pool folds the registered cost tags into labels; str.isalnum() kept 'é', so an Owner "José Müller"
(a valid AWS tag) became a label value the API server refuses, and every object of the pool with it.
"""

from __future__ import annotations

import re

from inference_infra.components.tagging import CostTags, register_cost_tags

# apimachinery pkg/util/validation/validation.go: qnameCharFmt [A-Za-z0-9], qnameExtCharFmt
# [-A-Za-z0-9_.], LabelValueMaxLength 63 (IsValidLabelValue), read 2026-12-02.
K8S_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _tags(**overrides: str) -> CostTags:
    values = {"cost_center": "ml-platform", "environment": "dev", "owner": "ml@example.com", **overrides}
    return CostTags(auto_shutdown=True, **values)


def test_kubernetes_pool_cost_labels_are_valid_label_values_for_non_ascii_tags(harness):
    from inference_infra.components.k8s.pool_manifests import cost_labels

    def labels() -> dict[str, str]:
        register_cost_tags(_tags(owner="José Müller", cost_center="Ärzte-Team", environment="dev"))
        return cost_labels()

    found = harness.in_loop(labels)
    assert found["owner"] == "Jos__M_ller"
    for key, value in found.items():
        assert K8S_LABEL_VALUE.fullmatch(value), (key, value)
        assert len(value) <= 63
