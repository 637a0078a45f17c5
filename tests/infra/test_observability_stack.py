from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from inference_infra.components.cli import main
from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.components.offline_plan.model import is_secret

REPO = Path(__file__).resolve().parents[2]
COMPONENT = "inference-infra:k8s:GpuObservability"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"


def test_prod_stack_deploys_gpu_observability(plan_stack):
    capture = plan_stack("prod").capture
    component = capture.one(COMPONENT, "gpu-obs")
    types = {r.type for r in capture.children(component)}
    assert {
        "kubernetes:helm.sh/v3:Release",
        RULE,
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:core/v1:Secret",
        "random:index/randomPassword:RandomPassword",
    } <= types
    provider = capture.one("pulumi:providers:kubernetes", "gpu-obs-k8s")
    assert provider.props["context"] == "inference-prod"


def test_prod_stack_rule_is_what_the_cli_renders_for_prod(plan_stack, capsys):
    rule = plan_stack("prod").capture.one(RULE).props
    assert main(["monitoring", "rules", "--stack", "prod", "--cwd", str(REPO)]) == 0
    assert rule["spec"] == yaml.safe_load(capsys.readouterr().out)


def test_prod_stack_receiver_secrets_stay_secret(plan_stack):
    capture = plan_stack("prod").capture
    secret = capture.one("kubernetes:core/v1:Secret", "gpu-obs-alertmanager-config")
    assert is_secret(secret.wire_props["stringData"])
    config = yaml.safe_load(secret.props["stringData"]["alertmanager.yaml"])
    assert [r["name"] for r in config["receivers"]] == ["null", "ml-oncall", "ml-platform-slack"]
    assert is_secret(plan_stack("prod").capture.stack_outputs["grafanaAdminPassword"])


def test_dev_stack_has_no_monitoring_stack(plan_stack):
    capture = plan_stack("dev").capture
    assert capture.of_type(COMPONENT) == []


def _project(tmp_path: Path, stack_yaml: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / "Pulumi.prod.yaml").write_text(stack_yaml)
    return tmp_path


PROVIDER = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABCDEF0123456789"

_BASE = """\
config:
  inference-infra:costCenter: ml-platform
  inference-infra:owner: ml@example.com
"""


def _plan_error(tmp_path: Path, extra: str) -> str:
    with pytest.raises(InputError) as caught:
        plan(_project(tmp_path, _BASE + textwrap.indent(textwrap.dedent(extra), "  ")), "prod")
    return " ".join(str(caught.value).split())


def test_observability_rejects_receiver_secrets_in_plain_text(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:observability:
            alertReceivers: [{name: slack, kind: slack, secret: slackWebhookUrl}]
          inference-infra:observabilitySecrets:
            slackWebhookUrl: https://hooks.slack.com/services/T0/B0/xyz
        """,
    )
    assert (
        "inference-infra:observabilitySecrets '(plain text)' must be set with `pulumi config set --secret"
        in message
    )
    assert "xyz" not in message


def test_observability_rejects_a_receiver_naming_a_missing_secret(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:observability:
            alertReceivers: [{name: slack, kind: slack, secret: slackWebhook}]
          inference-infra:observabilitySecrets:
            slackWebhookUrl: {secure: v1:abc:def}
        """,
    )
    assert (
        "inference-infra:observability.alertReceivers[0].secret 'slackWebhook' must name a key of "
        "inference-infra:observabilitySecrets (did you mean 'slackWebhookUrl'?)"
    ) in message


def test_observability_rejects_production_without_receivers(tmp_path):
    message = _plan_error(tmp_path, "inference-infra:observability: {retentionDays: 7}\n")
    assert (
        "inference-infra:observability.alertReceivers [] must name at least one receiver in production"
        in message
    )


def test_observability_reports_component_problems_under_their_config_keys(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:environment: staging
          inference-infra:observability:
            storageSizeGib: 20
            retentionSizeGib: 30
            thresholds: {idleUtilizationPercent: 99}
        """,
    )
    assert "inference-infra:observability.retentionSizeGib 30 must be below storageSizeGib (20)" in message
    assert "inference-infra:observability.thresholds.idleUtilizationPercent 99.0 must be below" in message


def test_observability_rejects_a_value_out_of_the_inputs_bounds_naming_the_stack_file(tmp_path):
    message = _plan_error(tmp_path, "inference-infra:observability: {storageSizeGib: 2}\n")
    assert (
        "invalid stack config in Pulumi.prod.yaml: inference-infra:observability.storageSizeGib = 2: "
        "must be 5 to 65536"
    ) in message


def test_observability_rejects_unknown_threshold_keys_with_a_suggestion(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:observability:
            thresholds: {idlePercent: 10}
        """,
    )
    assert "inference-infra:observability.thresholds.idlePercent is not a setting here" in message
    assert "(did you mean 'idleUtilizationPercent'?)" in message


def test_prod_stack_prometheus_scrapes_its_own_fleets_with_serving_and_absent_rules(plan_stack):
    capture = plan_stack("prod").capture
    values = capture.one("kubernetes:helm.sh/v3:Release", "gpu-obs-kube-prometheus-stack").props["values"]
    jobs = values["prometheus"]["prometheusSpec"]["additionalScrapeConfigs"]
    # Engines on both clouds are scraped on their metrics-only ports (9000, 9001: GET /metrics only),
    # never on an API port; one job per port and cloud.
    names = ["dcgm-exporter", "node-exporter", "vllm-9000", "vllm-9001"]
    assert [j["job_name"] for j in jobs] == [
        *(f"{n}-ec2" for n in names),
        *(f"{n}-gce" for n in names),
        "vllm-static",
    ]
    env_filter = {"name": "tag:Environment", "values": ["prod"]}
    ec2, gce, (static,) = jobs[:4], jobs[4:8], jobs[8:]
    # every engine of every pool: the 70B pools run two tensor-parallel groups per node
    pool_filter = {f["name"]: f["values"] for f in ec2[3]["ec2_sd_configs"][0]["filters"]}["tag:Pool"]
    # The pools with a second metrics-only port (9001), by name; each cloud's discovery finds its own.
    assert pool_filter == ["llama-70b", "llama70b-h100"]
    assert gce[3]["relabel_configs"][0]["regex"] == "llama\\-70b|llama70b\\-h100"  # the same, by label
    assert [r["target_label"] for r in static["relabel_configs"]] == ["job"]
    (tpu,) = static["static_configs"]
    assert tpu["labels"] == {"cloud": "gcp", "pool": "qwen7b-tpu", "instance_type": "v6e-4"}
    (host,) = {t.rsplit(":", 1)[0] for t in tpu["targets"]}  # the slice's one host (from its outputs)
    # v6e-4 at TP=1: four single-chip engines on the slice's host (8000-8003), scraped on 9000-9003
    assert tpu["targets"] == [f"{host}:{port}" for port in (9000, 9001, 9002, 9003)]
    assert all(env_filter in sd["filters"] for j in ec2 for sd in j["ec2_sd_configs"])
    env_keep = {"source_labels": ["__meta_gce_label_environment"], "regex": "prod", "action": "keep"}
    assert all(env_keep in j["relabel_configs"] for j in gce)
    gcp_fleets = capture.of_type("gcp:compute/instance:Instance")
    # Every zone a GCE fleet may run in: its VMs' zones and its managed groups' distribution zones.
    group_zones = {
        z
        for g in capture.of_type("gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager")
        for z in g.props["distributionPolicyZones"]
    }
    zones = {vm.props["zone"] for vm in gcp_fleets} | group_zones
    assert {sd["zone"] for sd in gce[0]["gce_sd_configs"]} == zones
    assert {sd["project"] for sd in gce[0]["gce_sd_configs"]} == {vm.props["project"] for vm in gcp_fleets}
    groups = {g["name"]: g["rules"] for g in capture.one(RULE).props["spec"]["groups"]}
    absent = {(r["alert"], r["labels"].get("pool")) for r in groups["inference-infra-absent-targets"]}
    assert any(alert == "GpuExporterAbsent" for alert, _ in absent)
    # The cluster's neuron-monitor is off in prod until its image has a digest (Pulumi.prod.yaml), and
    # the Inferentia VMs report to CloudWatch: no neuron-monitor target is expected, none is alerted on.
    assert not any(alert == "NeuronMetricsAbsent" for alert, _ in absent)
    assert ("ServingEngineAbsent", "qwen7b-tpu") in absent
    assert not any(pool == "qwen7b-tpu" and alert != "ServingEngineAbsent" for alert, pool in absent)
    firewall = capture.one("gcp:compute/firewall:Firewall", "qwen7b-tpu-metrics").props
    assert firewall["sourceRanges"] == ["10.20.0.0/16"]
    assert firewall["allows"] == [{"protocol": "tcp", "ports": ["9000-9003"]}]  # metrics-only ports
    prices = [
        r
        for r in groups["inference-infra-serving-cost"]
        if r.get("record", "").endswith("price_usd_per_hour")
    ]
    assert prices
    planned = [
        r
        for r in groups["inference-infra-serving-cost"]
        if r.get("record", "").endswith("planned_usd_per_million_tokens")
    ]
    assert planned  # a pool whose type the planner chose carries its estimate next to the live figure


def test_prod_stack_prometheus_discovers_as_an_irsa_role_that_may_only_list_instances(plan_stack):
    capture = plan_stack("prod").capture
    role = capture.one("aws:iam/role:Role", "gpu-obs-discovery-role")
    (statement,) = json.loads(role.props["assumeRolePolicy"])["Statement"]
    issuer = "oidc.eks.us-east-1.amazonaws.com/id/5C0A1E2B3D4F60718293A4B5C6D7E8F9"
    assert statement["Condition"]["StringEquals"][f"{issuer}:sub"] == (
        "system:serviceaccount:monitoring:gpu-obs-kps-prometheus"
    )
    policy = capture.one("aws:iam/rolePolicy:RolePolicy", "gpu-obs-discovery-list-instances")
    actions = {a for s in json.loads(policy.props["policy"])["Statement"] for a in s["Action"]}
    assert actions == {"ec2:DescribeInstances", "ec2:DescribeAvailabilityZones"}
    values = capture.one("kubernetes:helm.sh/v3:Release", "gpu-obs-kube-prometheus-stack").props["values"]
    annotations = values["prometheus"]["serviceAccount"]["annotations"]
    assert set(annotations) == {"eks.amazonaws.com/role-arn"}
    assert annotations["eks.amazonaws.com/role-arn"].startswith("arn:aws:iam::")
    # the service account the role trusts is the one the chart creates for Prometheus
    service = capture.one("inference-infra:k8s:GpuObservability").outputs["prometheus_service"]
    assert statement["Condition"]["StringEquals"][f"{issuer}:sub"].endswith(f":{service}")


@pytest.mark.parametrize(
    "identity",
    ["{}", f"{{eksOidcProviderArn: '{PROVIDER}', gkeWorkloadPool: acme-inference-prod.svc.id.goog}}"],
    ids=["neither", "both"],
)
def test_observability_rejects_both_or_neither_discovery_identity(tmp_path, identity):
    message = _plan_error(
        tmp_path,
        f"""\
          inference-infra:environment: staging
          inference-infra:observability:
            discoveryIdentity: {identity}
        """,
    )
    assert "inference-infra:observability.discoveryIdentity" in message
    assert "must set exactly one of eksOidcProviderArn (Prometheus on EKS) and gkeWorkloadPool" in message


def test_observability_rejects_a_malformed_oidc_provider_arn(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:environment: staging
          inference-infra:observability:
            discoveryIdentity: {eksOidcProviderArn: "arn:aws:iam::123456789012:role/prometheus"}
        """,
    )
    assert (
        "inference-infra:observability.discoveryIdentity.eksOidcProviderArn "
        "'arn:aws:iam::123456789012:role/prometheus' must be an EKS cluster's IAM OIDC provider ARN"
    ) in message


def test_observability_rejects_neuron_monitor_without_a_digest_pinned_image(tmp_path):
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:environment: staging
          inference-infra:observability:
            neuronMonitor: true
        """,
    )
    assert (
        "inference-infra:observability.neuronMonitorImage (unset) must be given with neuronMonitor" in message
    )
    message = _plan_error(
        tmp_path,
        """\
          inference-infra:environment: staging
          inference-infra:observability:
            neuronMonitor: true
            neuronMonitorImage: public.ecr.aws/neuron/neuron-monitor:1.3.0
        """,
    )
    assert (
        "inference-infra:observability.neuronMonitorImage 'public.ecr.aws/neuron/neuron-monitor:1.3.0' "
        "must be pinned by digest"
    ) in message


def test_prod_stack_serving_rules_judge_under_use_against_each_pools_planned_max_num_seqs(plan_stack):
    capture = plan_stack("prod").capture
    groups = {g["name"]: g["rules"] for g in capture.one(RULE).props["spec"]["groups"]}
    seqs = {
        r["labels"]["pool"]: r["expr"]
        for r in groups["inference-infra-serving-alerts"]
        if r.get("record") == "inference_infra:serving_max_num_seqs"
    }
    # The engines each fleet planned: its vLLM units carry the same --max-num-seqs.
    template = capture.one("aws:ec2/launchTemplate:LaunchTemplate", "llama-70b-lt").props
    units = {f["path"]: f["content"] for f in yaml.safe_load(_user_data(template["userData"]))["write_files"]}
    assert set(seqs) >= {"llama-70b", "llama-8b", "mistral-7b", "inf2-llama-8b", "small-l4", "qwen7b-tpu"}
    assert seqs["llama-70b"] == "vector(32)"  # 64 sequences over the p5's two tensor-parallel engines
    assert "--max-num-seqs 32 " in units["/etc/systemd/system/inference-engine@.service"]
    underused = next(
        r for r in groups["inference-infra-serving-alerts"] if r.get("alert") == "ServingBatchUnderused"
    )
    assert "inference_infra:serving_max_num_seqs" in underused["expr"]


def _user_data(encoded: str) -> str:
    from inference_infra.components.aws.bootstrap import decode_user_data

    return decode_user_data(encoded)


def test_prod_stack_pools_are_planned_within_their_latency_budgets(plan_stack):
    assert [w for w in plan_stack("prod").warnings() if "latency budget" in w] == []


def test_observability_warns_when_a_pool_is_planned_over_its_latency_budget(tmp_path):
    prod = (REPO / "Pulumi.prod.yaml").read_text()
    assert prod.count("      latency: batch\n") == 2  # inf2-llama-8b and small-l4
    result = plan(_project(tmp_path, prod.replace("      latency: batch\n", "")), "prod")
    warnings = [" ".join(w.split()) for w in result.warnings() if "latency budget" in w]
    assert [w.split(":")[0] for w in warnings] == [
        "pool 'inf2-llama-8b' is planned over its interactive latency budget",
        "pool 'small-l4' is planned over its interactive latency budget",
    ]
    # the planner's figures (9.14 s, 0.102 s when written) may move; the budgets they miss may not
    assert re.search(r"time to first token [\d.]+ s > 2 s \(llama-3.1-8b on inf2.8xlarge", warnings[0])
    assert re.search(r"time per output token [\d.]+ s > 0.1 s \(llama-3.1-8b on g2-standard-8", warnings[1])
    assert warnings[1].endswith("or declare `latency: batch` if it serves batch work.")
