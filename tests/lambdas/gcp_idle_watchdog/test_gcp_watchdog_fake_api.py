"""The GCP watchdog end to end against the loopback fake of Compute Engine, Cloud TPU, Cloud
Monitoring and Pub/Sub, through Google's own client libraries (REST): listing, measuring, deciding,
stopping and notifying, with throttling, server errors, small pages, partial results and skewed clocks.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from inference_infra.lambdas.gcp_idle_watchdog.report import JsonLog
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings
from inference_infra.lambdas.gcp_idle_watchdog.watchdog import run

NOW = datetime(2026, 12, 2, 1, 2, 30, tzinfo=UTC)
P = "acme-inference-prod"
ZONE = "us-central1-a"
SETTINGS = Settings(projects=(P,))


def vm_key(name: str, zone: str = ZONE, project: str = P) -> str:
    return f"projects/{project}/zones/{zone}/instances/{name}"


def tpu_key(name: str, zone: str = "us-west4-a", project: str = P) -> str:
    return f"projects/{project}/locations/{zone}/nodes/{name}"


def gpu_vm(
    fake, fake_gcp, name: str, percent, *, gpus: int = 1, zone: str = ZONE, hours: float = 3, **fields
):
    accelerators = [{"acceleratorType": "nvidia-l4", "acceleratorCount": gpus}]
    vm = fake.add_vm(P, zone, name, guestAccelerators=accelerators, **fields)
    for gpu in range(gpus):
        value = percent(gpu) if callable(percent) and percent.__code__.co_argcount == 1 else percent
        fake.add_gpu_series(P, vm, gpu, fake_gcp.samples(NOW - timedelta(hours=hours), NOW, value))
    return vm


def watch(
    fake, clients_for, settings: Settings = SETTINGS, now: datetime = NOW, *, skew: timedelta = timedelta()
):
    """One run at `now`; the fake's clock reads now + skew."""
    fake.now = now + skew
    stream = io.StringIO()
    result = run(settings, clients_for(settings), now=now, log=JsonLog(stream))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    return result.as_dict(), lines


def test_watchdog_stops_idle_gpu_vm_and_leaves_busy_and_silent_ones(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    gpu_vm(fake, fake_gcp, "busy", 60.0)
    fake.add_vm(P, ZONE, "silent")  # no series at all: no evidence
    out, lines = watch(fake, clients_for)
    assert out["stopped"] == [vm_key("idle")]
    assert out["skipped"]["busy"] == [vm_key("busy")]
    assert out["skipped"]["no_metrics"] == [vm_key("silent")]
    assert fake.stopped == [vm_key("idle")]
    decision = next(line for line in lines if line.get("machine") == vm_key("idle"))
    assert decision["action"] == "stopped"
    assert decision["points"] == decision["expected_points"] == 6
    assert fake.calls["monitoring.list"] == 1
    assert fake.calls["compute.list"] == 1


def tpu_node(
    fake, fake_gcp, name: str, percent, *, workers: int = 1, chips: int = 4, hours: float = 3, **fields
):
    node = fake.add_tpu(P, "us-west4-a", name, workers=workers, **fields)
    for worker in range(workers):
        for chip in range(chips):
            fake.add_tpu_series(
                P, node, worker, chip, fake_gcp.samples(NOW - timedelta(hours=hours), NOW, percent)
            )
    return node


def test_watchdog_stops_idle_tpu_node_through_the_tpu_api(fake, fake_gcp, clients_for):
    tpu_node(fake, fake_gcp, "slice", 0.5, workers=2)
    tpu_node(fake, fake_gcp, "serving", 40.0)
    out, _ = watch(fake, clients_for)
    assert out["stopped"] == [tpu_key("slice")]
    assert out["skipped"]["busy"] == [tpu_key("serving")]
    assert fake.calls["tpu.stop"] == 1
    assert fake.calls["compute.stop"] == 0


def test_watchdog_keeps_machines_when_one_device_or_one_period_is_missing(fake, fake_gcp, clients_for):
    """Partial series: one of eight GPUs silent, one TPU worker silent, one period missing."""
    vm = fake.add_vm(
        P, ZONE, "seven-of-eight", guestAccelerators=[{"acceleratorType": "h100", "acceleratorCount": 8}]
    )
    for gpu in range(7):
        fake.add_gpu_series(P, vm, gpu, fake_gcp.samples(NOW - timedelta(hours=3), NOW, 1.0))
    node = fake.add_tpu(P, "us-west4-a", "one-worker-silent", workers=2)
    fake.add_tpu_series(P, node, 0, 0, fake_gcp.samples(NOW - timedelta(hours=3), NOW, 0.0))
    gap = gpu_vm(fake, fake_gcp, "gap", 1.0)
    fake.series[P][-1].samples = [
        s
        for s in fake.series[P][-1].samples
        if not NOW - timedelta(minutes=25) < s[0] <= NOW - timedelta(minutes=15)
    ]
    out, lines = watch(fake, clients_for)
    assert out["idle"] == []
    assert fake.stopped == []
    assert set(out["skipped"]["no_metrics"]) == {
        vm_key("seven-of-eight"),
        tpu_key("one-worker-silent"),
        vm_key(gap["name"]),
    }
    details = {line["machine"]: line["detail"] for line in lines if line.get("event") == "decision"}
    assert details[vm_key("seven-of-eight")] == "7 of 8 GPU(s) have data"
    assert details[vm_key("gap")] == "5 of 6 periods have data on every GPU"


def test_watchdog_treats_monitoring_execution_errors_as_no_evidence(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    gpu_vm(fake, fake_gcp, "busy", 90.0)
    fake.partial_monitoring = True
    out, _ = watch(fake, clients_for)
    assert out["skipped"]["no_metrics"] == [vm_key("idle")]
    assert out["skipped"]["busy"] == [vm_key("busy")]  # a busy point is evidence even in a partial answer
    assert fake.stopped == []


def test_watchdog_retries_throttling_and_server_errors_on_every_route(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    tpu_node(fake, fake_gcp, "slice", 0.0)
    fake.fail("compute.list", 429, times=2)
    fake.fail("tpu.list", 503)
    fake.fail("monitoring.list", 429)
    fake.fail("monitoring.list", 500)
    fake.fail("compute.stop", 502)
    fake.fail("tpu.stop", 429)
    out, _ = watch(fake, clients_for)
    assert sorted(out["stopped"]) == sorted([vm_key("idle"), tpu_key("slice")])
    assert fake.calls["compute.list"] == 3
    assert fake.calls["tpu.list"] == 2
    assert fake.calls["monitoring.list"] == 2 + 2  # two queries (GPU, TPU), two retried answers
    assert fake.calls["compute.stop"] == 2
    assert fake.calls["tpu.stop"] == 2


def test_watchdog_fails_before_stopping_when_listing_keeps_failing(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    fake.fail("monitoring.list", 503, times=10_000)
    settings = SETTINGS
    with pytest.raises(Exception, match="503"):
        watch(fake, clients_for, settings)
    assert fake.stopped == []
    assert fake.calls["compute.stop"] == 0


def test_watchdog_reports_a_stop_that_keeps_failing_and_one_that_is_refused(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "flaky", 1.0)
    gpu_vm(fake, fake_gcp, "gone", 1.0)
    gpu_vm(fake, fake_gcp, "fine", 1.0)
    fake.refuse[vm_key("flaky")] = (503, "backend unavailable")
    fake.refuse[vm_key("gone")] = (404, "not found")
    out, lines = watch(fake, clients_for)
    assert out["stopped"] == [vm_key("fine")]
    assert out["failed"] == [vm_key("flaky")]
    assert out["skipped"]["not_stoppable"] == [vm_key("gone")]
    failed = next(line for line in lines if line.get("machine") == vm_key("flaky"))
    assert failed["severity"] == "ERROR"
    assert "503" in failed["error"]


def test_watchdog_pages_through_every_list(fake, fake_gcp, clients_for):
    zones = ["us-central1-a", "us-central1-b", "us-east4-c"]
    for n in range(25):
        gpu_vm(fake, fake_gcp, f"vm-{n}", 1.0 if n % 2 else 50.0, zone=zones[n % 3])
    for n in range(5):
        tpu_node(fake, fake_gcp, f"tpu-{n}", 0.0)
    fake.page_size.update({"compute.list": 4, "tpu.list": 2, "monitoring.list": 3})
    out, _ = watch(fake, clients_for)
    assert out["checked"] == 30
    assert len(out["stopped"]) == 12 + 5
    assert len(out["skipped"]["busy"]) == 13
    assert fake.calls["compute.list"] == 7  # ceil(25 / 4)
    assert fake.calls["tpu.list"] == 3  # ceil(5 / 2)
    assert fake.calls["monitoring.list"] == 9 + 2  # ceil(25 / 3) GPU pages + ceil(5 / 3) TPU pages


@pytest.mark.parametrize(
    ("skew", "stopped"),
    [
        (timedelta(minutes=7), True),  # the server is ahead: the window's data is all there
        (timedelta(minutes=-7), False),  # the server is behind: the newest periods are empty on it
    ],
)
def test_watchdog_under_clock_skew_stops_only_on_complete_evidence(
    fake, fake_gcp, clients_for, skew, stopped
):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    out, _ = watch(fake, clients_for, skew=skew)
    assert (out["stopped"] == [vm_key("idle")]) is stopped
    if not stopped:
        assert out["skipped"]["no_metrics"] == [vm_key("idle")]


def test_watchdog_gives_grace_to_a_vm_whose_start_time_is_ahead_of_its_clock(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "restarted", 1.0, lastStartTimestamp=(NOW - timedelta(minutes=20)).isoformat())
    gpu_vm(fake, fake_gcp, "skewed", 1.0, lastStartTimestamp=(NOW + timedelta(minutes=3)).isoformat())
    out, _ = watch(fake, clients_for)
    assert sorted(out["skipped"]["grace"]) == sorted([vm_key("restarted"), vm_key("skewed")])


def test_watchdog_reads_a_tpu_nodes_grace_from_gaps_in_its_series(fake, fake_gcp, clients_for):
    """TPU nodes carry no start time: a node started 40 min ago (series gap) is in its 60-min grace."""
    tpu_node(fake, fake_gcp, "restarted", 0.0, hours=40 / 60)
    tpu_node(fake, fake_gcp, "steady", 0.0)
    out, _ = watch(fake, clients_for)
    assert out["skipped"]["grace"] == [tpu_key("restarted")]
    assert out["stopped"] == [tpu_key("steady")]


def test_watchdog_never_stops_group_members_reservations_queued_or_spot_tpus(fake, fake_gcp, clients_for):
    mig = {"items": [{"key": "created-by", "value": f"projects/123/zones/{ZONE}/instanceGroupManagers/pool"}]}
    gpu_vm(fake, fake_gcp, "mig-member", 0.0, metadata=mig)
    gpu_vm(
        fake,
        fake_gcp,
        "reserved",
        0.0,
        reservationAffinity={"consumeReservationType": "SPECIFIC_RESERVATION", "values": ["h100-res"]},
    )
    gpu_vm(
        fake,
        fake_gcp,
        "any-reservation",
        0.0,
        resourceStatus={
            "reservationConsumptionInfo": {
                "consumedReservation": f"projects/{P}/zones/{ZONE}/reservations/r1"
            }
        },
    )
    gpu_vm(fake, fake_gcp, "bound", 0.0, scheduling={"provisioningModel": "RESERVATION_BOUND"})
    tpu_node(
        fake, fake_gcp, "queued", 0.0, queuedResource=f"projects/{P}/locations/us-west4-a/queuedResources/q"
    )
    tpu_node(fake, fake_gcp, "spot-tpu", 0.0, schedulingConfig={"spot": True})
    tpu_node(fake, fake_gcp, "reserved-tpu", 0.0, schedulingConfig={"reserved": True})
    fake.add_vm(P, ZONE, "preempted", status="TERMINATED", scheduling={"provisioningModel": "SPOT"})
    fake.add_vm(P, ZONE, "unlabelled", labels={})
    fake.ignore_filters = True  # the watchdog checks status and label itself too
    out, lines = watch(fake, clients_for)
    assert out["idle"] == []
    assert fake.stopped == []
    assert out["skipped"]["managed"] == [vm_key("mig-member")]
    assert sorted(out["skipped"]["reserved_capacity"]) == sorted(
        [vm_key("reserved"), vm_key("any-reservation"), vm_key("bound"), tpu_key("reserved-tpu")]
    )
    assert sorted(out["skipped"]["not_stoppable"]) == sorted([tpu_key("queued"), tpu_key("spot-tpu")])
    assert out["checked"] == 7  # neither the preempted Spot VM nor the unlabelled one is a candidate
    assert fake.calls["monitoring.list"] == 0  # none of them needed a query
    detail = next(line["detail"] for line in lines if line.get("machine") == vm_key("reserved"))
    assert "h100-res" in detail


def test_watchdog_stops_reserved_vms_only_when_told_and_discards_local_ssds(fake, fake_gcp, clients_for):
    gpu_vm(
        fake,
        fake_gcp,
        "reserved",
        0.0,
        reservationAffinity={"consumeReservationType": "SPECIFIC_RESERVATION", "values": ["r"]},
        disks=[{"type": "PERSISTENT", "boot": True}, {"type": "SCRATCH"}, {"type": "SCRATCH"}],
    )
    settings = Settings(projects=(P,), stop_reserved_capacity=True)
    out, lines = watch(fake, clients_for, settings)
    stopped = next(line for line in lines if line.get("machine") == vm_key("reserved"))
    assert stopped["action"] == "stopped"
    assert stopped["reservation"] == "r"  # the log says it stopped a machine on a reservation
    assert out["stopped"] == [vm_key("reserved")]  # the fake refuses a local-SSD stop without discardLocalSsd
    assert out["estimated_hourly_saving_usd"] == 0  # a reservation bills on


def test_watchdog_leaves_local_ssd_vms_when_discarding_is_off(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "cache", 0.0, disks=[{"type": "SCRATCH"}])
    out, _ = watch(fake, clients_for, Settings(projects=(P,), discard_local_ssd=False))
    assert out["skipped"]["not_stoppable"] == [vm_key("cache")]
    assert fake.stopped == []


def test_watchdog_honours_the_opt_out_label(fake, fake_gcp, clients_for):
    gpu_vm(
        fake,
        fake_gcp,
        "later",
        0.0,
        labels={"auto-shutdown": "true", "auto-shutdown-exclude-until": "2026-12-03"},
    )
    gpu_vm(
        fake,
        fake_gcp,
        "garbled",
        0.0,
        labels={"auto-shutdown": "true", "auto-shutdown-exclude-until": "soon"},
    )
    gpu_vm(
        fake,
        fake_gcp,
        "expired",
        0.0,
        labels={"auto-shutdown": "true", "auto-shutdown-exclude-until": "2026-12-01t18-00"},
    )
    out, _ = watch(fake, clients_for)
    assert sorted(out["skipped"]["excluded"]) == sorted([vm_key("later"), vm_key("garbled")])
    assert out["stopped"] == [vm_key("expired")]


def test_watchdog_dry_run_stops_nothing_and_notifies(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 0.0)
    settings = Settings(projects=(P,), dry_run=True, pubsub_topic=f"projects/{P}/topics/oncall")
    out, lines = watch(fake, clients_for, settings)
    assert out["dry_run"] is True
    assert out["idle"] == [vm_key("idle")]
    assert out["stopped"] == []
    assert fake.calls["compute.stop"] == 0
    assert [line["action"] for line in lines if line.get("event") == "decision"] == ["would_stop"]
    (message,) = fake.published
    assert message["topic"] == f"projects/{P}/topics/oncall"
    assert "would stop 1 machine" in message["data"]
    assert vm_key("idle") in message["data"]


def test_watchdog_notifies_each_stop_and_fails_after_stopping_when_pubsub_fails(fake, fake_gcp, clients_for):
    from inference_infra.lambdas.gcp_idle_watchdog.watchdog import ReportError

    gpu_vm(fake, fake_gcp, "idle", 0.0)
    settings = Settings(projects=(P,), pubsub_topic=f"projects/{P}/topics/oncall")
    fake.fail("pubsub.publish", 403)
    with pytest.raises(ReportError, match="403"):
        watch(fake, clients_for, settings)
    assert fake.stopped == [vm_key("idle")]


def test_watchdog_repeated_runs_are_harmless(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 0.0)
    first, _ = watch(fake, clients_for)
    second, _ = watch(fake, clients_for)
    assert first["stopped"] == [vm_key("idle")]
    assert second["checked"] == 0
    assert fake.stopped == [vm_key("idle")]


def test_watchdog_warns_when_a_query_finds_no_series_at_all(fake, fake_gcp, clients_for):
    """A wrong TPU resource type (or metric) finds nothing: every node stays, and the log says why."""
    tpu_node(fake, fake_gcp, "slice", 0.0)
    settings = Settings(projects=(P,), tpu_resource_type="tpu.googleapis.com/GceTpuWorker")
    out, lines = watch(fake, clients_for, settings)
    assert out["skipped"]["no_metrics"] == [tpu_key("slice")]
    assert fake.stopped == []
    (warning,) = [line for line in lines if line["event"] == "no_series"]
    assert warning["severity"] == "WARNING"
    assert "GceTpuWorker" in warning["queries"][0]
