"""Batching: GetMetricData queries (500 per call, results merged across pages) and StopInstances splits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from botocore.exceptions import ClientError

from inference_infra.lambdas.idle_gpu_watchdog.actions import stop_instances
from inference_infra.lambdas.idle_gpu_watchdog.instances import Instance
from inference_infra.lambdas.idle_gpu_watchdog.metrics import (
    MAX_QUERIES_PER_CALL,
    build_queries,
    collect_results,
)
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

T0 = datetime(2026, 3, 2, 11, 35, tzinfo=UTC)


def fleet(n: int, instance_type: str = "g5.xlarge") -> list[Instance]:
    return [
        Instance(instance_id=f"i-{k:05d}", instance_type=instance_type, launch_time=T0 - timedelta(hours=5))
        for k in range(n)
    ]


def test_build_queries_batches_at_most_500_per_call():
    batches = build_queries(fleet(1201), Settings(), 300)
    assert [len(b) for b in batches] == [500, 500, 201]
    ids = [q["Id"] for b in batches for q in b]
    assert len(set(ids)) == 1201
    assert all(len(b) <= MAX_QUERIES_PER_CALL for b in batches)


def test_build_queries_asks_for_the_maximum_per_instance():
    (query,) = build_queries(fleet(1), Settings(), 300)[0]
    assert query["MetricStat"] == {
        "Metric": {
            "Namespace": "CWAgent",
            "MetricName": "nvidia_smi_utilization_gpu",
            "Dimensions": [{"Name": "InstanceId", "Value": "i-00000"}],
        },
        "Period": 300,
        "Stat": "Maximum",
    }
    assert query["Id"][0].islower()  # GetMetricData ids must start with a lower-case letter


def test_build_queries_uses_the_neuron_metric_for_inferentia_and_trainium():
    settings = Settings.from_env({"NEURON_METRIC_NAMESPACE": "NeuronMonitor"})
    (inf2,) = build_queries(fleet(1, "inf2.48xlarge"), settings, 300)[0]
    (trn1,) = build_queries(fleet(1, "trn1.32xlarge"), settings, 300)[0]
    for query in (inf2, trn1):
        metric = query["MetricStat"]["Metric"]
        assert (metric["Namespace"], metric["MetricName"]) == ("NeuronMonitor", "neuroncore_utilization")


def test_collect_results_merges_one_query_across_pages():
    step = timedelta(minutes=5)
    pages = [
        {
            "MetricDataResults": [
                {
                    "Id": "m0",
                    "Timestamps": [T0, T0 + step],
                    "Values": [1.0, 2.0],
                    "StatusCode": "PartialData",
                },
                {"Id": "m1", "Timestamps": [T0], "Values": [9.0], "StatusCode": "Complete"},
            ],
            "NextToken": "t",
        },
        {
            "MetricDataResults": [
                {"Id": "m0", "Timestamps": [T0 + 2 * step], "Values": [3.0], "StatusCode": "Complete"}
            ]
        },
    ]
    merged = collect_results(pages)
    assert [v for _, v in merged["m0"].points] == [1.0, 2.0, 3.0]
    assert merged["m0"].complete
    assert merged["m1"].complete


def test_collect_results_marks_a_query_that_ends_incomplete():
    page = {
        "MetricDataResults": [
            {"Id": "m0", "Timestamps": [T0], "Values": [0.0], "StatusCode": "InternalError"}
        ]
    }
    assert not collect_results([page])["m0"].complete


class FakeEc2:
    """stop_instances that fails a whole call when it includes a protected instance, as EC2 does."""

    def __init__(self, protected: set[str] = frozenset(), error: str = "OperationNotPermitted") -> None:
        self.protected = protected
        self.error = error
        self.calls: list[list[str]] = []

    def stop_instances(self, InstanceIds: list[str]) -> dict:  # noqa: N803 (boto3's spelling)
        self.calls.append(list(InstanceIds))
        if bad := [i for i in InstanceIds if i in self.protected]:
            raise ClientError(
                {"Error": {"Code": self.error, "Message": f"{bad[0]} may not be stopped"}}, "StopInstances"
            )
        return {"StoppingInstances": [{"InstanceId": i} for i in InstanceIds]}


def test_stop_instances_batches_by_100():
    ec2 = FakeEc2()
    ids = [f"i-{k}" for k in range(250)]
    outcome = stop_instances(ec2, ids)
    assert [len(c) for c in ec2.calls] == [100, 100, 50]
    assert outcome.stopped == ids


def test_stop_instances_isolates_one_bad_instance_without_blocking_the_rest():
    ids = [f"i-{k}" for k in range(100)]
    ec2 = FakeEc2(protected={"i-37"})
    outcome = stop_instances(ec2, ids)
    assert sorted(outcome.stopped) == sorted(set(ids) - {"i-37"})
    assert list(outcome.refused) == ["i-37"]
    assert "OperationNotPermitted" in outcome.refused["i-37"]
    assert outcome.failed == {}
    assert len(ec2.calls) <= 1 + 2 * 7  # one split per level of a binary search over 100


def test_stop_instances_reports_unauthorized_as_failed():
    ec2 = FakeEc2(protected={"i-1"}, error="UnauthorizedOperation")
    outcome = stop_instances(ec2, ["i-0", "i-1", "i-2"])
    assert sorted(outcome.stopped) == ["i-0", "i-2"]
    assert list(outcome.failed) == ["i-1"]


def test_stop_instances_does_not_split_a_batch_that_stays_throttled():
    ec2 = FakeEc2(protected={"i-0"}, error="RequestLimitExceeded")
    outcome = stop_instances(ec2, ["i-0", "i-1", "i-2"])
    assert len(ec2.calls) == 1
    assert sorted(outcome.failed) == ["i-0", "i-1", "i-2"]
