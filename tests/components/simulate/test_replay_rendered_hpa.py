"""The replay's Kubernetes scaler is the HPA the pool renders: hold its assumptions against the manifests.

settings.py (cloud "kubernetes") and replay._tick_hpa assume the ScaledObject's HPA adds the larger of
one machine's pods per scale_out_cooldown_seconds and 100% of the pods per sync, lets go at most one
machine's pods a minute after a scale_in_cooldown_seconds stabilisation window, and reads a load
Prometheus scrapes every 30 s. A change to components/k8s/pool_manifests.py that breaks one of these
fails here, so the replay follows it.
"""

from __future__ import annotations

from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.components.simulate.settings import HPA_SYNC_SECONDS, K8S_SCRAPE_SECONDS, scaler_settings
from tests.components.k8s.pool_cases import EKS_ELASTIC


def test_replayed_hpa_is_the_rendered_one(plan_of):
    pool = KubernetesServingPool("llama", EKS_ELASTIC)
    capture = plan_of()
    spec = capture.one("kubernetes:keda.sh/v1alpha1:ScaledObject").props["spec"]
    scaling, pods = pool.plan.scaling, pool.plan.engines.engines
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    up = scaling.scale_out_cooldown_seconds or HPA_SYNC_SECONDS
    assert behavior["scaleUp"] == {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": pods, "periodSeconds": up},
            {"type": "Percent", "value": 100, "periodSeconds": HPA_SYNC_SECONDS},
        ],
    }
    assert behavior["scaleDown"] == {
        "stabilizationWindowSeconds": scaling.scale_in_cooldown_seconds,
        "policies": [{"type": "Pods", "value": pods, "periodSeconds": 60}],
    }
    replayed = scaler_settings(scaling, cloud="kubernetes")
    assert replayed.stabilisation_seconds == scaling.scale_in_cooldown_seconds
    # the Percent policy is replayed per sync period, at the rendered percentage
    assert replayed.hpa_scale_up_percent == behavior["scaleUp"]["policies"][1]["value"]
    assert behavior["scaleUp"]["policies"][1]["periodSeconds"] == replayed.period_seconds
    assert (replayed.period_seconds, replayed.metric_lag_seconds) == (HPA_SYNC_SECONDS, K8S_SCRAPE_SECONDS)
    monitors = [r for r in capture.resources if r.type.endswith("PodMonitor")]
    intervals = {e["interval"] for m in monitors for e in m.props["spec"]["podMetricsEndpoints"]}
    assert intervals == {f"{K8S_SCRAPE_SECONDS}s"}


def test_replayed_hpa_scale_down_percent_is_the_rendered_one_with_the_deficit_sizing(plan_of):
    from dataclasses import replace

    args = replace(EKS_ELASTIC, elastic=replace(EKS_ELASTIC.elastic, scale_in_sizing="deficit"))
    pool = KubernetesServingPool("llama", args)
    capture = plan_of()
    spec = capture.one("kubernetes:keda.sh/v1alpha1:ScaledObject").props["spec"]
    scaling, pods = pool.plan.scaling, pool.plan.engines.engines
    down = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    assert down == {
        "stabilizationWindowSeconds": scaling.scale_in_cooldown_seconds,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": pods, "periodSeconds": 60},
            {"type": "Percent", "value": 50, "periodSeconds": 60},
        ],
    }
    replayed = scaler_settings(scaling, cloud="kubernetes")
    assert replayed.hpa_scale_down_percent == down["policies"][1]["value"]
    assert down["policies"][1]["periodSeconds"] == 60  # the replay's window for its scale-down limits
    assert (
        scaler_settings(replace(scaling, scale_in_sizing="share"), cloud="kubernetes").hpa_scale_down_percent
        == 0
    )
