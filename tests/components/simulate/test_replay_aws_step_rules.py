"""The replay's AWS scaler against what EC2 Auto Scaling documents (review6, issue #39).

Sources (read 2026-12-02): EC2 Auto Scaling User Guide, "Step and simple scaling policies", section "Step
adjustments for step scaling" ("Amazon EC2 Auto Scaling applies the aggregation type to the most recent
metric data points ... It compares this aggregated metric value against the upper and lower bounds");
the archived source of that page, awsdocs/amazon-ec2-auto-scaling-user-guide
doc_source/as-scaling-simple-step.md at 6c46a785 (2023).
"""

from __future__ import annotations

from inference_infra.components.simulate import Trace, replay
from tests.components.simulate.test_replay import _serving, deficit_plan, pool, scaler, steady


def test_deficit_band_is_chosen_from_the_alarm_windows_average_not_its_last_datapoint():
    # 20 in flight on 12 machines, no lag, a two-datapoint window (cooldown 120 s). The alarm's value is
    # the load per machine were one gone: 120 s: 20 / 11 = 1.8 (and 1.8 before it): 38% of 12 = 4 -> 8.
    # 180 s: the window holds 1.8 (12 machines) and 20 / 7 = 2.9 (8): the policy aggregates them
    # (Average) to 2.3, band top 2.8: 29% of 8 = 2 go -> 6 (the last datapoint alone, 2.9, would pick
    # the band with top 3.5: 20%, one machine -> 7).
    result = replay(Trace.of(steady(2, 0, 1800)), pool(**deficit_plan()), scaler(12))
    assert _serving(result)[:4] == [12, 12, 8, 6]


def test_kubernetes_percent_scale_down_truncates_as_the_hpa_does():
    # The HPA's Percent scale-down limit is int32(replicas at the period's start x (1 - percent / 100)),
    # truncated (kubernetes pkg/controller/podautoscaler/horizontal.go, calculateScaleDownLimitWithBehaviors,
    # read 2026-12-02). 5 in flight on 5 machines (the recommendation: 1) after the 300 s stabilisation:
    # Percent 50 lets the replicas fall to int(2.5) = 2 in the first minute (rounding up would keep 3).
    rows = steady(0.5, 0, 2400)
    base = {"cloud": "kubernetes", "period_seconds": 15, "stabilisation_seconds": 300}
    half = replay(Trace.of(rows), pool(), scaler(5, hpa_scale_down_percent=50, **base))
    served = _serving(half)
    first = next(k for k, n in enumerate(served) if n < 5)
    assert served[first] == 2


def test_target_tracking_answers_each_minute_its_alarm_stays_in_alarm_without_a_cooldown():
    # Target tracking scales out "immediately without waiting for the cooldown period" (EC2 Auto Scaling
    # User Guide, "Scaling cooldowns", Considerations: cooldowns are simple policies' only), and its
    # alarm, in ALARM while the Average per machine serving stays over the target, invokes it once a
    # minute (CloudWatch User Guide, "Using Amazon CloudWatch alarms": Auto Scaling actions repeat each
    # minute in the state; read 2026-12-02). 4 machines (7 per machine the target, 10 slots): 30 in flight
    # from 600 s is 7.5 per machine, over the target at 660, 720 and 780 s: one machine launches at 780 s
    # (ceil(30 / 7) = 5). 36 in flight from 840 s: the alarm is still in ALARM (the 4 machines serving
    # carry 9 each), so at 900 s it asks ceil(36 / 7) = 6 > 5 and a sixth launches at once, not after
    # three more datapoints (1,020 s).
    rows = steady(1, 0, 600) + steady(3, 600, 840) + steady(3.6, 840, 1800)
    result = replay(Trace.of(rows), pool(max_size=12), scaler(4, fast_scale_out=False))
    assert [x.decided_s for x in result.launches] == [780.0, 900.0]
