from __future__ import annotations

import dataclasses

import pytest
import yaml

from inference_infra.components.catalog import AcceleratorFamily, Cloud, instance_types
from inference_infra.components.monitoring.rules import render_rules_yaml
from inference_infra.components.monitoring.scrape import (
    AwsDiscovery,
    GcpDiscovery,
    ScrapeSettings,
    StaticTargets,
    families,
    render_scrape_config_yaml,
    scrape_config,
    validate_scrape_settings,
)


def _jobs(settings: ScrapeSettings) -> dict[str, dict]:
    return {job["job_name"]: job for job in scrape_config(settings)["scrape_configs"]}


def _filters(job: dict) -> dict[str, list[str]]:
    first = job["ec2_sd_configs"][0]["filters"]
    assert all(sd["filters"] == first for sd in job["ec2_sd_configs"])
    return {f["name"]: f["values"] for f in first}


def _targets(job: dict) -> dict[str, str]:
    """target label -> the meta label it is copied from."""
    return {
        r["target_label"]: r["source_labels"][0]
        for r in job["relabel_configs"]
        if "source_labels" in r and "target_label" in r
    }


AWS = ScrapeSettings(
    discovery=AwsDiscovery(regions=["us-east-1", "us-west-2"], tags={"Environment": "prod"}),
    neuron_monitor=True,
)
GCP = ScrapeSettings(
    discovery=GcpDiscovery(project="acme-inference", zones=["us-central1-a", "us-central1-b"])
)


def test_scrape_aws_discovers_running_tagged_gpu_instances_on_9400_and_9100():
    jobs = _jobs(AWS)
    assert list(jobs) == ["dcgm-exporter", "node-exporter", "neuron-monitor", "vllm"]
    dcgm = jobs["dcgm-exporter"]
    assert [sd["region"] for sd in dcgm["ec2_sd_configs"]] == ["us-east-1", "us-west-2"]
    assert {sd["port"] for sd in dcgm["ec2_sd_configs"]} == {9400}
    assert {sd["port"] for sd in jobs["node-exporter"]["ec2_sd_configs"]} == {9100}
    assert {sd["port"] for sd in jobs["neuron-monitor"]["ec2_sd_configs"]} == {8000}
    filters = _filters(dcgm)
    assert filters["tag-key"] == ["AutoShutdown"]
    assert filters["instance-state-name"] == ["running"]
    assert filters["tag:Environment"] == ["prod"]


def test_scrape_aws_families_come_from_the_catalog_so_inferentia_is_no_dcgm_target():
    dcgm, node, neuron, _ = (_filters(j)["instance-type"] for j in _jobs(AWS).values())

    def wildcards(family: AcceleratorFamily) -> set[str]:
        return {i.name.split(".")[0] + ".*" for i in instance_types(Cloud.AWS, family)}

    assert set(dcgm) == wildcards(AcceleratorFamily.NVIDIA_GPU)
    assert set(neuron) == wildcards(AcceleratorFamily.AWS_NEURON)
    assert "p5.*" in dcgm
    assert "inf2.*" not in dcgm
    assert "inf2.*" in neuron
    assert set(node) == set(dcgm) | set(neuron)


def test_scrape_aws_relabels_instance_id_type_zone_and_cost_tags():
    targets = _targets(_jobs(AWS)["dcgm-exporter"])
    assert targets["instance"] == targets["node"] == targets["instance_id"] == "__meta_ec2_instance_id"
    assert targets["instance_type"] == "__meta_ec2_instance_type"
    assert targets["zone"] == "__meta_ec2_availability_zone"
    assert targets["lifecycle"] == "__meta_ec2_instance_lifecycle"
    assert targets["cost_center"] == "__meta_ec2_tag_CostCenter"
    assert targets["environment"] == "__meta_ec2_tag_Environment"
    assert targets["owner"] == "__meta_ec2_tag_Owner"
    assert targets["auto_shutdown"] == "__meta_ec2_tag_AutoShutdown"
    assert {"target_label": "cloud", "replacement": "aws"} in _jobs(AWS)["dcgm-exporter"]["relabel_configs"]


def test_scrape_aws_assumes_a_role_when_given_and_leaves_jobs_out_on_request():
    settings = ScrapeSettings(
        discovery=AwsDiscovery(
            regions=["us-east-1"], role_arn="arn:aws:iam::123456789012:role/prometheus-sd"
        ),
        node_exporter=False,
        neuron_monitor=False,
        engine_ports=(),
    )
    jobs = _jobs(settings)
    assert list(jobs) == ["dcgm-exporter"]
    assert (
        jobs["dcgm-exporter"]["ec2_sd_configs"][0]["role_arn"]
        == "arn:aws:iam::123456789012:role/prometheus-sd"
    )


def test_scrape_gcp_keeps_running_labelled_gpu_vms_per_zone():
    jobs = _jobs(GCP)
    assert list(jobs) == ["dcgm-exporter", "node-exporter", "vllm"]  # no Neuron machines on GCP
    dcgm = jobs["dcgm-exporter"]
    assert [(sd["project"], sd["zone"], sd["port"]) for sd in dcgm["gce_sd_configs"]] == [
        ("acme-inference", "us-central1-a", 9400),
        ("acme-inference", "us-central1-b", 9400),
    ]
    keep = {r["source_labels"][0]: r["regex"] for r in dcgm["relabel_configs"] if r.get("action") == "keep"}
    assert keep["__meta_gce_instance_status"] == "RUNNING"
    assert keep["__meta_gce_label_auto_shutdown"] == ".+"
    assert keep["__meta_gce_machine_type"] == ".*/(a2|a3|g2|n1)-[^/]+"
    assert families(Cloud.GCP, AcceleratorFamily.NVIDIA_GPU) == ["a2", "a3", "g2", "n1"]


def test_scrape_gcp_relabels_machine_type_zone_and_cost_labels():
    rules = _jobs(GCP)["dcgm-exporter"]["relabel_configs"]
    by_target = {r["target_label"]: r for r in rules if "target_label" in r}
    assert by_target["instance_type"] == {
        "source_labels": ["__meta_gce_machine_type"],
        "target_label": "instance_type",
        "regex": ".*/([^/]+)",
    }
    assert by_target["zone"]["regex"] == ".*/([^/]+)"
    assert by_target["node"]["source_labels"] == ["__meta_gce_instance_name"]
    assert by_target["cost_center"]["source_labels"] == ["__meta_gce_label_cost_center"]
    assert by_target["auto_shutdown"]["source_labels"] == ["__meta_gce_label_auto_shutdown"]


def test_scrape_gcp_label_filters_become_keep_rules():
    settings = ScrapeSettings(
        discovery=GcpDiscovery(
            project="acme-inference", zones=["europe-west4-a"], labels={"environment": "prod"}
        )
    )
    rules = _jobs(settings)["dcgm-exporter"]["relabel_configs"]
    assert {"source_labels": ["__meta_gce_label_environment"], "regex": "prod", "action": "keep"} in rules


BOTH = ScrapeSettings(discovery=(AWS.discovery, GCP.discovery), neuron_monitor=True)


def test_scrape_both_clouds_keep_one_job_label_per_exporter():
    jobs = _jobs(BOTH)
    assert sorted(jobs) == [
        "dcgm-exporter-ec2",
        "dcgm-exporter-gce",
        "neuron-monitor-ec2",
        "node-exporter-ec2",
        "node-exporter-gce",
        "vllm-ec2",
        "vllm-gce",
    ]
    for name, job in jobs.items():
        common = name.rsplit("-", 1)[0]
        assert job["relabel_configs"][-1] == {"target_label": "job", "replacement": common}
    assert "ec2_sd_configs" in jobs["dcgm-exporter-ec2"]
    assert "gce_sd_configs" in jobs["dcgm-exporter-gce"]
    assert _jobs(AWS).keys() == {
        "dcgm-exporter",
        "node-exporter",
        "neuron-monitor",
        "vllm",
    }  # one cloud: as is


def test_scrape_rejects_no_discovery_at_all():
    assert [str(p) for p in validate_scrape_settings(ScrapeSettings(discovery=()))] == [
        "discovery [] must name one AWS or GCP discovery at least"
    ]


PER_POOL = ScrapeSettings(discovery=BOTH.discovery, pool_engine_ports={"llama-70b": [8000, 8001, 8002]})


@pytest.mark.parametrize("settings", [AWS, GCP, BOTH, PER_POOL], ids=["aws", "gcp", "both", "per-pool"])
def test_scrape_config_passes_promtool_check_config_with_the_rules(settings, tmp_path, promtool, run):
    (tmp_path / "gpu-rules.yml").write_text(render_rules_yaml())
    config = dataclasses.replace(settings, rule_files=["gpu-rules.yml"], scrape_interval_seconds=30)
    path = tmp_path / "prometheus.yml"
    path.write_text(render_scrape_config_yaml(config))
    assert yaml.safe_load(path.read_text())["global"] == {
        "scrape_interval": "30s",
        "evaluation_interval": "30s",
    }
    result = run(promtool, "check", "config", path, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is valid prometheus config file syntax" in result.stdout
    assert "rules found" in result.stdout


def test_scrape_yaml_has_no_anchors_for_people_to_decode():
    assert "&id" not in render_scrape_config_yaml(AWS)


def test_scrape_rejects_bad_aws_input_naming_each_problem():
    settings = ScrapeSettings(
        discovery=AwsDiscovery(
            regions=["us-east-1", "useast1", "us-east-1"], tags={"Env": ""}, role_arn="prometheus"
        ),
        scrape_interval_seconds=1,
    )
    assert [str(p) for p in validate_scrape_settings(settings)] == [
        "scrape interval 1 must be 5 to 300 seconds",
        "region 'useast1' is not an AWS region name (like us-east-1)",
        "region 'us-east-1' is listed twice",
        "tag 'Env' '' must be KEY=VALUE with a valid EC2 tag key",
        "role ARN 'prometheus' must be an IAM role ARN",
    ]


def test_scrape_rejects_aws_without_a_region():
    assert [str(p) for p in validate_scrape_settings(ScrapeSettings(discovery=AwsDiscovery(regions=[])))] == [
        "region (unset) is required for EC2 discovery (one or more)"
    ]


def test_scrape_rejects_bad_gcp_input_naming_each_problem():
    settings = ScrapeSettings(
        discovery=GcpDiscovery(project="Acme", zones=["us-central1"], labels={"Env": "Prod"})
    )
    assert [str(p) for p in validate_scrape_settings(settings)] == [
        "project 'Acme' must be a GCP project id (6-30 of a-z, 0-9, -)",
        "zone 'us-central1' is not a GCP zone name (like us-central1-a)",
        "label 'Env' 'Prod' must be KEY=VALUE in GCP's label alphabet (a-z, 0-9, _ -)",
    ]


def test_scrape_engines_on_every_port_with_the_fleet_as_pool_label():
    settings = ScrapeSettings(
        discovery=AwsDiscovery(regions=["us-east-1", "us-west-2"]), engine_ports=(8000, 8001)
    )
    engine = _jobs(settings)["vllm"]
    assert [(c["region"], c["port"]) for c in engine["ec2_sd_configs"]] == [
        ("us-east-1", 8000),
        ("us-east-1", 8001),
        ("us-west-2", 8000),
        ("us-west-2", 8001),
    ]
    assert {"source_labels": ["__meta_ec2_tag_Pool"], "target_label": "pool"} in engine["relabel_configs"]
    families = _filters(engine)["instance-type"]
    assert "inf2.*" in families
    assert "p5.*" in families


def test_scrape_rejects_engine_ports_out_of_range():
    from inference_infra.components.monitoring.scrape import validate_scrape_settings

    problems = validate_scrape_settings(
        ScrapeSettings(discovery=AwsDiscovery(regions=["us-east-1"]), engine_ports=(80, 8000, 8000))
    )
    assert [(p.input, p.value) for p in problems] == [("engine port", 80), ("engine port", "8000")]


TPU = ScrapeSettings(
    discovery=GCP.discovery,
    engine_ports=(8000, 8001),
    static_engines=(StaticTargets(pool="qwen7b-tpu", instance_type="v5litepod-4", addresses=["10.40.0.7"]),),
)


def test_scrape_tpu_engines_from_fleet_outputs_as_job_vllm():
    job = _jobs(TPU)["vllm-static"]
    assert job["static_configs"] == [
        {
            "targets": ["10.40.0.7:8000", "10.40.0.7:8001"],
            "labels": {"cloud": "gcp", "pool": "qwen7b-tpu", "instance_type": "v5litepod-4"},
        }
    ]
    assert job["relabel_configs"] == [{"target_label": "job", "replacement": "vllm"}]


def test_scrape_static_engines_alone_need_no_discovery():
    alone = ScrapeSettings(discovery=(), static_engines=TPU.static_engines)
    assert validate_scrape_settings(alone) == []
    assert [j["job_name"] for j in scrape_config(alone)["scrape_configs"]] == ["vllm-static"]


def test_scrape_config_with_static_tpu_engines_passes_promtool(tmp_path, promtool, run):
    path = tmp_path / "prometheus.yml"
    path.write_text(render_scrape_config_yaml(TPU))
    result = run(promtool, "check", "config", path, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_scrape_every_engine_of_each_pool_and_no_port_nothing_listens_on():
    settings = ScrapeSettings(
        discovery=(AWS.discovery, GCP.discovery),
        pool_engine_ports={"llama-70b": [8000, 8001], "llama70b-h100": [8000, 8001], "small": [8000]},
    )
    jobs = _jobs(settings)
    ec2, gce = jobs["vllm-8001-ec2"], jobs["vllm-8001-gce"]
    assert {sd["port"] for sd in ec2["ec2_sd_configs"]} == {8001}
    assert _filters(ec2)["tag:Pool"] == ["llama-70b", "llama70b-h100"]  # only those pools
    assert {sd["port"] for sd in gce["gce_sd_configs"]} == {8001}
    assert gce["relabel_configs"][0] == {
        "source_labels": ["__meta_gce_label_fleet"],
        "regex": "llama\\-70b|llama70b\\-h100",
        "action": "keep",
    }
    for job in (ec2, gce):  # one job label for every engine, whatever its port
        assert [r for r in job["relabel_configs"] if r.get("target_label") == "job"] == [
            {"target_label": "job", "replacement": "vllm"}
        ]
    assert _filters(jobs["vllm-8000-ec2"])["tag:Pool"] == ["llama-70b", "llama70b-h100", "small"]
    assert "vllm-ec2" not in jobs  # no job scrapes every accelerator node on an engine port


def test_scrape_ports_are_the_ports_the_host_exporters_listen_on():
    from inference_infra.components.monitoring.host_exporters import (
        DCGM_EXPORTER_PORT,
        NODE_EXPORTER_PORT,
        exporter_command,
    )

    for settings, sd in ((AWS, "ec2_sd_configs"), (GCP, "gce_sd_configs")):
        jobs = _jobs(settings)
        assert {c["port"] for c in jobs["dcgm-exporter"][sd]} == {DCGM_EXPORTER_PORT}
        assert {c["port"] for c in jobs["node-exporter"][sd]} == {NODE_EXPORTER_PORT}
    node = exporter_command("node-exporter", "example/node-exporter", gpus=False)
    assert f"--web.listen-address=:{NODE_EXPORTER_PORT}" in node
