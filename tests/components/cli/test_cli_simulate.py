"""`inference-infra simulate`: a pool from a stack file or from flags, JSON, the plot, exit 2 on bad input."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from inference_infra.components.cli import main
from inference_infra.components.monitoring.serving import BUDGETS, Latency

ROOT = Path(__file__).resolve().parents[3]
FLAGS = [
    "--model", "llama-3.1-8b", "--machine", "g6e.xlarge", "--context", "8192", "--concurrency", "16",
    "--peak", "8",
]  # fmt: skip


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def flat(text):
    return " ".join(text.split())


@pytest.fixture
def trace(tmp_path):
    """Ten minutes at 2 requests a second, then ten at 8: a step."""
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    t = 0.0
    while t < 1200:
        lines.append(f"{t:.3f},1000,150")
        t += 0.5 if t < 600 else 0.125
    path = tmp_path / "step.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_simulate_json_from_flags_has_the_documented_fields(capsys, trace):
    code, out, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {
        "pool", "model", "machine", "latency", "slo", "trace", "scaling", "service", "cost", "ttft", "scale",
        "queue", "timeline", "notes",
    }  # fmt: skip
    assert doc["scaling"]["start_size"] == doc["scaling"]["min_size"] == 2  # ceil(8 x 0.25), not the trace's
    # the rendered instance warm-up: the slow start after InService (= serving), not the 600 s grace
    assert doc["scaling"]["instance_warmup_seconds"] == doc["scaling"]["warmup_beyond_serving_seconds"] == 90
    assert doc["cost"]["lower_bound_usd"] <= doc["cost"]["oracle_usd"]
    assert doc["slo"]["met"] == (doc["slo"]["miss_share"] <= 0.01)
    assert doc["machine"] == "g6e.xlarge"
    assert doc["ttft"]["target_seconds"] == BUDGETS[Latency.INTERACTIVE].ttft_p99_seconds
    assert doc["cost"]["oracle_usd"] <= doc["cost"]["static_usd"]
    assert doc["cost"]["elastic_usd"] > 0
    assert doc["trace"]["requests"] == 1200 + 4800
    assert doc["scale"]["scale_outs"] >= 1
    assert len(doc["timeline"]) >= 20


def test_simulate_table_from_the_reference_stack(capsys, trace):
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--stack", "prod", "--pool", "llama-8b", "--cwd", str(ROOT)
    )
    assert code == 0, err
    text = flat(out)
    assert "llama-8b: llama-3.1-8b on g6e.xlarge (interactive)" in text
    assert "the oracle" in text
    # elastic: {} on 1 on-demand + 6 spot; it starts at its minimum
    assert "scaling (aws): 2..7 machines of 16 slots, starting at 2" in text
    # the step to 8 requests a second is more than two machines hold: said first, and marked
    assert text.startswith("SLO NOT MET: ")
    assert "the oracle (SLO not met)" in text


def test_simulate_replays_a_fixed_pool_with_the_default_elastic_settings(capsys, trace):
    code, out, err = run(
        capsys,
        "simulate",
        "--trace",
        str(trace),
        "--stack",
        "prod",
        "--pool",
        "mistral-7b",
        "--cwd",
        str(ROOT),
    )
    assert code == 0, err
    assert "has no elastic: block in Pulumi.prod.yaml; replayed with the default elastic settings" in flat(
        out
    )


def test_simulate_scaling_flags_override_the_stack(capsys, trace):
    code, out, _ = run(
        capsys, "simulate", "--trace", str(trace), "--stack", "prod", "--pool", "llama-8b",
        "--cwd", str(ROOT), "--min-size", "3", "--max-size", "5", "--json",
    )  # fmt: skip
    assert code == 0
    scaling = json.loads(out)["scaling"]
    assert (scaling["min_size"], scaling["max_size"]) == (3, 5)


def test_simulate_writes_an_svg_plot(capsys, trace, tmp_path):
    plot = tmp_path / "replay.svg"
    code, _, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--plot", str(plot))
    assert code == 0, err
    root = ET.parse(plot).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert titles == ["requests in flight", "pool slots", "oracle slots", "longest queue"]


def test_simulate_rejects_png_without_matplotlib(capsys, trace, tmp_path):
    pytest.importorskip(
        "matplotlib", reason="with matplotlib installed the PNG is written"
    ) if False else None
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        code, _, err = run(
            capsys, "simulate", "--trace", str(trace), *FLAGS, "--plot", str(tmp_path / "p.png")
        )
        assert code == 2
        assert "PNG needs matplotlib, the optional 'plot' extra" in flat(err)
    else:
        code, _, _ = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--plot", str(tmp_path / "p.png"))
        assert code == 0
        assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_simulate_rejects_a_bad_csv_line(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,5\n1,ten,5\n")
    code, out, err = run(capsys, "simulate", "--trace", str(bad), *FLAGS)
    assert code == 2
    assert out == ""
    assert f"--trace '{bad}' line 3: ContextTokens 'ten' must be a whole number" in flat(err)
    assert "Traceback" not in err


def test_simulate_rejects_an_unknown_pool_with_close_matches(capsys, trace):
    code, _, err = run(
        capsys, "simulate", "--trace", str(trace), "--stack", "prod", "--pool", "llama8b", "--cwd", str(ROOT)
    )
    assert code == 2
    assert "--pool 'llama8b' is not a fleet of Pulumi.prod.yaml (did you mean 'llama-8b'" in flat(err)


def test_simulate_rejects_a_tpu_pool(capsys, trace):
    code, _, err = run(
        capsys,
        "simulate",
        "--trace",
        str(trace),
        "--stack",
        "prod",
        "--pool",
        "qwen7b-tpu",
        "--cwd",
        str(ROOT),
    )
    assert code == 2
    assert "TPU VMs cannot join a managed instance group" in flat(err)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--stack", "prod"], "--stack 'prod' needs --pool NAME"),
        (["--pool", "x"], "--pool 'x' names a fleet of a stack: it needs --stack NAME"),
        (["--model", "llama-3.1-8b"], "missing --context, --concurrency, --peak"),
        ([*FLAGS[:-2], "--peak", "most"], "--peak 'most' must be a whole number of machines of at least 1"),
        ([*FLAGS, "--scale-in-share", "2"], "--scale-in-share 2 must be a whole percent in 0..0.9"),
        ([*FLAGS, "--metric-lag", "-1"], "--metric-lag -1 must be 0..3600 seconds"),
        ([*FLAGS, "--interruptions-per-hour", "5"], "--interruptions-per-hour 5 must be 0..1"),
        (
            [*FLAGS, "--tune", "--plot", "f.png"],
            "--plot 'f.png': with --tune the frontier is drawn as .svg only",
        ),
        (
            ["--from-program", *FLAGS],
            "--from-program runs a stack's program: it needs --stack NAME --pool NAME",
        ),
        ([*FLAGS, "--plot", "out.txt"], "--plot 'out.txt' must end in .svg or .png"),
        ([*FLAGS, "--scale", "0"], "--scale 0 must be a whole number of at least 1"),
        ([*FLAGS, "--fast-scale-out", "0.5"], "--fast-scale-out 0.5 must be 0 (off) or 1..2"),
        ([*FLAGS, "--scale-in-sizing", "fastest"], "'fastest' is not one of 'deficit', 'share'"),
        ([*FLAGS[:-2], "--min-size", "9", "--peak", "4"], "--min-size 9 gives a minimum of 9 machines"),
        (
            [*FLAGS[:2], "--machine", "g9.huge", *FLAGS[4:]],
            "--machine 'g9.huge' is not in the accelerator catalog",
        ),
        (
            ["--stack", "prod", "--pool", "llama-8b", "--model", "x"],
            "--model describe a pool without a stack",
        ),
    ],
)
def test_simulate_rejects_bad_flags(capsys, trace, argv, message):
    code, _, err = run(capsys, "simulate", "--trace", str(trace), "--cwd", str(ROOT), *argv)
    assert code == 2, err
    assert message in flat(err)


def test_simulate_peak_from_the_trace_only_when_asked_and_said(capsys, trace):
    code, out, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS[:-2], "--peak", "trace", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert any(n.startswith("--peak trace: the peak") and "look-ahead" in n for n in doc["notes"])
    # the pool still starts at its minimum, the floor of that peak
    assert doc["scaling"]["start_size"] == doc["scaling"]["min_size"]


def test_simulate_cold_start_flag_takes_an_end_of_the_estimates_range(capsys, trace):
    runs = {}
    for which in ("fastest", "typical", "slowest"):
        code, out, err = run(
            capsys, "simulate", "--trace", str(trace), *FLAGS, "--cold-start", which, "--json"
        )
        assert code == 0, err
        runs[which] = json.loads(out)["scaling"]
    low, high = runs["typical"]["cold_start_range_seconds"]
    assert runs["fastest"]["cold_start_seconds"] == low
    assert runs["slowest"]["cold_start_seconds"] == high
    assert low < runs["typical"]["cold_start_seconds"] < high


def test_simulate_fast_scale_out_is_the_plans_and_the_flag_turns_it_off(capsys, trace):
    code, out, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--json")
    assert code == 0, err
    doc = json.loads(out)
    fast = doc["scaling"]["fast_scale_out"]
    # ElasticArgs' default: one datapoint at the target (16 x 0.7 = 11.2 in flight per machine)
    assert (fast["ratio"], fast["threshold_in_flight"]) == (1.0, doc["scaling"]["target_in_flight"])
    assert fast["steps"][0]["lower"] == 0.0
    assert fast["steps"][-1] == {"lower": 11.2, "upper": None, "percent": 100}
    # the step to 8/s lands in one datapoint: the fast step sizes the first scale-out
    assert doc["scale"]["fast_scale_outs"] >= 1
    code, out, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--fast-scale-out", "0", "--json")
    assert code == 0, err
    off = json.loads(out)
    assert off["scaling"]["fast_scale_out"] is None
    assert off["scale"]["fast_scale_outs"] == 0
    # target tracking alone waits two more datapoints: its first launch is later
    assert off["ttft"]["over_target"] >= doc["ttft"]["over_target"]


def test_simulate_scale_in_sizing_flag_replays_the_deficit_steps_or_the_share(capsys, trace):
    runs = {}
    for sizing in ("deficit", "share"):
        code, out, err = run(
            capsys, "simulate", "--trace", str(trace), *FLAGS, "--scale-in-sizing", sizing, "--json"
        )
        assert code == 0, err
        runs[sizing] = json.loads(out)
    deficit, share = runs["deficit"]["scaling"]["scale_in"], runs["share"]["scaling"]["scale_in"]
    # the threshold is 0.8 x the 11.2 target; the deficit bands go down from it (offsets, negative)
    assert deficit["sizing"] == "deficit"
    assert deficit["threshold_in_flight"] == share["threshold_in_flight"] == 8.96
    assert deficit["steps"][0] == {"lower": -1.12, "upper": 0.0, "percent": -1}
    assert deficit["steps"][-1]["lower"] is None
    assert (share["sizing"], share["steps"]) == ("share", None)


def test_simulate_gcp_pool_replays_the_gcp_autoscaler(capsys, trace):
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--model", "llama-3.1-8b", "--machine", "g2-standard-8",
        "--context", "4096", "--concurrency", "8", "--peak", "8", "--json",
    )  # fmt: skip
    assert code == 0, err
    scaling = json.loads(out)["scaling"]
    assert scaling["cloud"] == "gcp"
    assert scaling["stabilisation_seconds"] == 600
    assert (
        scaling["fast_scale_out"] is None
    )  # GCP renders no step policy: its autoscaler acts on each datapoint


def test_simulate_tune_prints_the_cheapest_settings_and_the_frontier(capsys, trace, tmp_path):
    plot = tmp_path / "frontier.svg"
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), *FLAGS, "--tune", "--json", "--plot", str(plot)
    )
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) >= {"best", "start", "frontier", "found", "oracle_usd", "static_usd", "runs"}
    assert set(doc["best"]) >= {"target_utilisation", "warm_pool_size", "min_size", "scale_in_share"}
    assert doc["frontier"]
    root = ET.parse(plot).getroot()
    assert [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")][:2] == [
        "allowed share",
        "frontier",
    ]
    code, _, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--tune", "--start-size", "2")
    assert code == 2
    assert "--tune searches the minimum the pool starts at: drop --start-size" in flat(err)


PROGRAM = """
from inference_infra.components.aws import GpuFleet, GpuFleetArgs, S3Weights, SubnetRef
from inference_infra.components.fleet import ElasticArgs, ServedModel

GpuFleet(
    "chat",
    GpuFleetArgs(
        instance_type="g6e.xlarge",
        vpc_id="vpc-1",
        subnets=[SubnetRef(id="subnet-0a", availability_zone="us-east-1a")],
        spot=0,
        on_demand=8,
        model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16),
        weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256="ab" * 32),
        elastic=ElasticArgs(min_size=3, target_utilisation=0.5),
    ),
)
"""


def test_simulate_replays_a_pool_a_python_program_defines(capsys, trace, pulumi_project):
    root = pulumi_project(PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    code, out, err = run(
        capsys,
        "simulate",
        "--trace",
        str(trace),
        "--cwd",
        str(root),
        "--stack",
        "dev",
        "--pool",
        "chat",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    # the program's own plan: min 3 as given, max its peak of 8, 16 x 0.5 in flight per machine
    scaling = doc["scaling"]
    assert (scaling["min_size"], scaling["max_size"], scaling["start_size"]) == (3, 8, 3)
    assert scaling["target_in_flight"] == 8.0
    assert doc["machine"] == "g6e.xlarge"
    assert any("read from what the program of outside registers for stack 'dev'" in n for n in doc["notes"])
    # a scaling flag overrides the program's plan
    code, out, _ = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "chat",
        "--min-size", "4", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["scaling"]["min_size"] == 4


K8S_PROGRAM = """
from inference_infra.components.aws import S3Weights
from inference_infra.components.catalog import Cloud
from inference_infra.components.fleet import ElasticArgs, ServedModel
from inference_infra.components.k8s import KubernetesServingPool, KubernetesServingPoolArgs
from inference_infra.components.k8s.serving_pool_args import KubernetesCluster, PrometheusRef

KubernetesServingPool(
    "chat",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(
            cloud=Cloud.AWS,
            oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/AB12",
        ),
        machine="g6e.xlarge",
        on_demand=6,
        model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16),
        weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256="ab" * 32),
        api_key_secret="arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-AbCdEf",
        prometheus=PrometheusRef(release="gpu-obs-kps"),
        environment="prod",
        elastic=ElasticArgs(min_size=2, target_utilisation=0.5),
    ),
)
"""


def test_simulate_replays_a_kubernetes_pool_a_program_defines_on_its_nodes(capsys, trace, pulumi_project):
    root = pulumi_project(K8S_PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "chat",
        "--kubernetes", "cluster-autoscaler", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    # the pool's own plan: min 2 as given, its peak of 6, 16 x 0.5 in flight per machine
    scaling = doc["scaling"]
    assert (scaling["min_size"], scaling["max_size"]) == (2, 6)
    assert scaling["target_in_flight"] == 8.0
    assert doc["machine"] == "g6e.xlarge"
    assert doc["kubernetes"]["node_starts"] >= 1  # replayed on nodes: pods wait for a node to start
    assert scaling["fast_scale_out"] is None  # the pod autoscaler renders no step policy


def test_simulate_rejects_a_pool_the_program_does_not_register(capsys, trace, pulumi_project):
    root = pulumi_project(PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    code, _, err = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "chatt"
    )
    assert code == 2
    assert "--pool 'chatt' is neither a fleet of Pulumi.dev.yaml nor one its program registers" in flat(err)
    assert "did you mean 'chat'" in flat(err)


def test_simulate_reads_a_program_pool_beside_stack_file_fleets_only_when_asked(
    capsys, trace, pulumi_project
):
    stack = "config:\n  aws:region: us-east-1\n  outside:awsGpuFleets:\n    - name: listed\n"
    root = pulumi_project(PROGRAM, {"dev": stack})
    code, _, err = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "chat"
    )
    assert code == 2
    assert "--pool 'chat' is not a fleet of Pulumi.dev.yaml; its pools: listed." in flat(err)
    assert "add --from-program" in flat(err)
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "chat",
        "--from-program", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["scaling"]["min_size"] == 3


def test_simulate_spot_purchase_replays_interruptions_at_the_types_band_rate(capsys, trace):
    from inference_infra.components.simulate.spot import BANDS, HOURS_PER_MONTH

    code, out, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, "--purchase", "spot", "--json")
    assert code == 0, err
    rate = json.loads(out)["scaling"]["interruptions_per_machine_hour"]
    # g6e.xlarge: 5-10% in us-east-1, >20% in us-west-2 (the advisor copy); no region: the higher
    assert rate == BANDS[">20%"] / HOURS_PER_MONTH
    assert (
        "Spot Instance Advisor band >20% for g6e.xlarge in us-west-2"
        in json.loads(out)["scaling"]["interruption_basis"]
    )
    code, out, err = run(
        capsys,
        "simulate",
        "--trace",
        str(trace),
        *FLAGS,
        "--purchase",
        "spot",
        "--region",
        "us-east-1",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["scaling"]["interruptions_per_machine_hour"] == BANDS["5-10%"] / HOURS_PER_MONTH
    code, out, _ = run(
        capsys, "simulate", "--trace", str(trace), *FLAGS, "--interruptions-per-hour", "0.5", "--json"
    )
    assert json.loads(out)["scaling"]["interruptions_per_machine_hour"] == 0.5


STACK_WITH_POOL = """\
config:
  aws:region: us-east-1
  outside:awsGpuFleets:
    - name: chat
      instanceType: g6e.xlarge
      onDemand: 8
      spot: 0
      model: {name: llama-3.1-8b, contextTokens: 8192, concurrency: 16}
      elastic: {}
"""


def test_simulate_caps_the_stack_pools_maximum_at_its_budget(capsys, trace, pulumi_project):
    root = pulumi_project("", {"dev": STACK_WITH_POOL})
    argv = [
        "simulate",
        "--trace",
        str(trace),
        "--cwd",
        str(root),
        "--stack",
        "dev",
        "--pool",
        "chat",
        "--json",
    ]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["scaling"]["max_size"] == 8  # no budget: the peak
    (root / "policy" / "config").mkdir(parents=True)
    budget = {"accelerator-spend-budget": {"maxHourlyUsd": 10}}
    (root / "policy" / "config" / "dev.json").write_text(json.dumps(budget))
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(out)
    # $10/h pays for 5 g6e.xlarge at $1.861/h on-demand: the default maximum is lowered, as the fleet's is
    assert doc["scaling"]["max_size"] == 5
    assert any("the stack's budget pays for 5 machine(s)" in n for n in doc["notes"])


def test_simulate_spot_band_is_the_stacks_region(capsys, trace):
    """#39: with --stack and no --region, the spot interruption band is the stack's region's (prod:
    us-east-1), not the higher band of the regions the advisor copy records."""
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--stack", "prod", "--pool", "llama-8b",
        "--cwd", str(ROOT), "--purchase", "spot", "--json",
    )  # fmt: skip
    assert code == 0, err
    basis = json.loads(out)["scaling"]["interruption_basis"]
    assert "in us-east-1" in basis, basis


LWS_PROGRAM = (
    K8S_PROGRAM.replace('"chat",', '"big",', 1)
    .replace('machine="g6e.xlarge",', 'machine="p5.48xlarge", hosts_per_replica=2,')
    .replace('name="llama-3.1-8b"', 'name="llama-3.1-405b"')
    .replace("concurrency=16", "concurrency=32")
    .replace("on_demand=6,", "on_demand=2,")
    .replace("elastic=ElasticArgs(min_size=2, target_utilisation=0.5)", "elastic=ElasticArgs(min_size=1)")
)


def test_simulate_replays_a_multi_host_pool_as_groups_of_its_hosts(capsys, trace, pulumi_project):
    from inference_infra.components.catalog import find_instance_type, hourly_price
    from inference_infra.components.fleet.elastic import decode_seconds_per_token
    from inference_infra.components.serving.model import ServedModel

    root = pulumi_project(LWS_PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), "--cwd", str(root), "--stack", "dev", "--pool", "big",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    # a replica is a group of 2 x p5.48xlarge: billed as two machines, decoding as the plan's group does
    one = hourly_price(find_instance_type("p5.48xlarge"), region="us-east-1").hourly_usd
    assert doc["cost"]["usd_per_machine_hour"] == pytest.approx(2 * one)
    assert "2 machines a replica" in doc["cost"]["basis"]
    assert doc["service"]["hosts_per_machine"] == 2
    model = ServedModel(name="llama-3.1-405b", context_tokens=8192, concurrency=32)
    # the plan's decode speed at its batch, pipelined at the stated efficiency (the trace's contexts
    # are shorter than the plan's, so the replay's step is at most the plan's)
    planned = decode_seconds_per_token(model, "p5.48xlarge", 2)
    assert 0 < doc["service"]["tpot_seconds"] <= planned * 1.0001
