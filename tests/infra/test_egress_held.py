"""Egress held in the reference stacks (#33 item 4): AWS nodes pull only from repositories the stack makes
(no node role may create one), GCP nodes reach Google's APIs privately and the internet only at named hosts.

Dev has no GCP part and no AWS image mirrors: its assertions hold over what it renders (no repository
creation anywhere, no VPC rule opening the internet).
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.mirrors import ECR_PRIVATE, mirror_repository
from inference_infra.components.errors import InputError
from inference_infra.components.gcp.network_args import boot_hosts
from inference_infra.components.offline_plan import plan

ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
REPOSITORY = "aws:ecr/repository:Repository"
RULE = "aws:ecr/pullThroughCacheRule:PullThroughCacheRule"
FQDN_RULE = "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule"
FIREWALL = "gcp:compute/firewall:Firewall"


def _actions(statement: dict) -> list[str]:
    action = statement.get("Action", [])
    return [action] if isinstance(action, str) else list(action)


def _statements(capture) -> list[tuple[str, dict]]:
    return [
        (r.name, s) for r in capture.of_type(ROLE_POLICY) for s in json.loads(r.props["policy"])["Statement"]
    ]


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_no_role_of_the_stack_may_create_a_repository(plan_stack, stack):
    capture = plan_stack(stack).capture
    statements = _statements(capture)
    assert statements  # the stack renders role policies at all
    for name, statement in statements:
        assert not any(a in ("ecr:CreateRepository", "ecr:*", "*") for a in _actions(statement)), name


def _created_arns(capture) -> set[str]:
    """arn of every repository the stack makes, from its name, region and the mirrors' account."""
    arns = set()
    for repository in capture.of_type(REPOSITORY):
        arns.add(
            f"arn:aws:ecr:{repository.props['region']}:123456789012:repository/{repository.props['name']}"
        )
    return arns


def _pulled_images(capture) -> dict[str, set[str]]:
    """Every image each launch template's boot runs (as mirrored), by template."""
    found: dict[str, set[str]] = {}
    for template in capture.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        if "inference-infra:k8s:EksNodeGroups$" in template.urn:
            continue  # no user data: EKS's AMI boots node group nodes (nodeadm)
        config = yaml.safe_load(decode_user_data(template.props["userData"]))
        for command in config.get("runcmd", []):
            if isinstance(command, list) and command[:2] == ["docker", "run"]:
                found.setdefault(template.name, set()).update(w for w in command if "@sha256:" in w)
    return found


def test_prod_every_image_of_every_aws_fleet_maps_to_exactly_one_created_repository(plan_stack):
    capture = plan_stack("prod").capture
    created = _created_arns(capture)
    assert created
    pulled = _pulled_images(capture)
    assert len(pulled) >= 4  # the GPU pools and the Inferentia pool
    for template, images in pulled.items():
        for image in images:
            found = mirror_repository(image, {})  # already mirrored: the ECR registry and repository
            assert found is not None, (template, image)
            registry, name = found
            region = ECR_PRIVATE.fullmatch(registry)["region"]
            matches = [a for a in created if a == f"arn:aws:ecr:{region}:123456789012:repository/{name}"]
            assert len(matches) == 1, (template, image)
    # and every repository a node may pull from (or import into) is one the stack made
    for name, statement in _statements(capture):
        if statement.get("Sid") in ("PullFromMirrors", "PullThroughFirstPull"):
            resources = statement["Resource"]
            for arn in [resources] if isinstance(resources, str) else resources:
                assert arn in created, (name, arn)
            if statement["Sid"] == "PullThroughFirstPull":
                assert _actions(statement) == ["ecr:BatchImportUpstreamImage"]


def test_prod_makes_the_pull_through_rules_its_mirrors_need(plan_stack):
    capture = plan_stack("prod").capture
    rules = {r.props["ecrRepositoryPrefix"]: r.props for r in capture.of_type(RULE)}
    # nvcr.io is a copy (no rule); docker.io authenticates with the stack's Secrets Manager credential
    assert set(rules) <= {"docker-hub", "quay", "ecr-public"}
    assert rules["docker-hub"]["upstreamRegistryUrl"] == "registry-1.docker.io"
    assert rules["docker-hub"]["credentialArn"].startswith(
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:ecr-pullthroughcache/"
    )
    for repository in capture.of_type(REPOSITORY):
        assert repository.props["imageTagMutability"] == "IMMUTABLE"
        assert repository.props["imageScanningConfiguration"] == {"scanOnPush": True}


def test_prod_gcp_nodes_reach_the_internet_only_at_the_boot_package_hosts(plan_stack):
    capture = plan_stack("prod").capture
    rule = capture.one(FQDN_RULE).props
    assert rule["direction"] == "EGRESS"
    assert rule["action"] == "allow"
    assert rule["match"]["destFqdns"] == list(boot_hosts("us-central1"))
    assert rule["match"]["layer4Configs"] == [{"ipProtocol": "tcp", "ports": ["443", "80"]}]
    network = capture.one("gcp:compute/network:Network").props
    assert network["networkFirewallPolicyEnforcementOrder"] == "BEFORE_CLASSIC_FIREWALL"
    egress = [r.props for r in capture.of_type(FIREWALL) if r.props["direction"] == "EGRESS"]
    open_ = [p for p in egress if "0.0.0.0/0" in p["destinationRanges"] and "allows" in p]
    assert open_ == []  # no VPC rule opens the internet; only the FQDN rule lets named hosts through
    assert any(p["destinationRanges"] == ["199.36.153.8/30"] for p in egress)
    zones = sorted(z.props["dnsName"] for z in capture.of_type("gcp:dns/managedZone:ManagedZone"))
    assert "googleapis.com." in zones
    assert "pkg.dev." in zones


def test_dev_renders_no_internet_opening_rule(plan_stack):
    capture = plan_stack("dev").capture
    assert capture.of_type(FQDN_RULE) == []
    egress = [r.props for r in capture.of_type(FIREWALL) if r.props["direction"] == "EGRESS"]
    assert [p for p in egress if "0.0.0.0/0" in p["destinationRanges"] and "allows" in p] == []


_PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
_GCP_FLEET_STACK = """\
config:
  gcp:project: acme-inference
  gcp:region: us-central1
  inference-infra:costCenter: ml
  inference-infra:owner: team
  inference-infra:egress:
{egress}
  inference-infra:gcpGpuFleets:
    - name: small
      machineType: g2-standard-8
      zone: us-central1-a
      spot: true
"""


def test_named_hosts_refuses_a_fleet_whose_registries_are_not_mirrored_by_key(pulumi_project):
    stack = _GCP_FLEET_STACK.format(egress="    gcp: named-hosts")
    with pytest.raises(InputError) as raised:
        plan(pulumi_project(_PROGRAM, {"named": stack}), "named")
    message = str(raised.value)
    assert "inference-infra:egress.gcpImageMirrors {} has no mirror of nvcr.io" in message
    assert "has no mirror of quay.io" in message


def test_named_hosts_refuses_hostile_allowed_hosts_by_key(pulumi_project):
    egress = "    gcp: named-hosts\n    gcpAllowedHosts: [deb.debian.org, '*.example.com', 10.0.0.1]"
    stack = _GCP_FLEET_STACK.format(egress=egress)
    with pytest.raises(InputError) as raised:
        plan(pulumi_project(_PROGRAM, {"named": stack}), "named")
    message = str(raised.value)
    assert "inference-infra:egress.gcpAllowedHosts[1] '*.example.com' must be one host name" in message
    assert (
        "inference-infra:egress.gcpAllowedHosts[2] '10.0.0.1' must be a host name, not an address" in message
    )


_NODES = (
    "gcp:compute/instance:Instance",
    "gcp:compute/instanceTemplate:InstanceTemplate",
    "gcp:tpu/v2Vm:V2Vm",
)
_URL_HOST = re.compile(r"https?://([A-Za-z0-9.-]+)")
_IMAGE_HOST = re.compile(r"([a-z0-9.-]+\.[a-z]{2,})/[a-z0-9._/-]+(?::[\w.-]+)?@sha256:[0-9a-f]{64}")


def test_prod_gcp_boots_call_only_google_apis_mirrors_and_the_named_hosts(plan_stack):
    """Every host a rendered GCP boot names (URLs and image references in its metadata) is reached under
    named-hosts: the metadata server, Google's APIs and Artifact Registry through Private Google Access, or
    a host of the FQDN rule. apt's own sources are the image's, listed in network_args.PACKAGE_HOSTS."""
    capture = plan_stack("prod").capture
    allowed = set(capture.one(FQDN_RULE).props["match"]["destFqdns"])
    nodes = [r for r in capture.resources if r.type in _NODES]
    assert nodes
    seen_images = 0
    for node in nodes:
        text = json.dumps(node.props, default=str)
        for host in _URL_HOST.findall(text):
            private = host == "metadata.google.internal" or host.endswith((".googleapis.com", ".pkg.dev"))
            assert private or host in allowed, (node.name, host)
        for host in _IMAGE_HOST.findall(text):
            seen_images += 1
            assert host.endswith("-docker.pkg.dev"), (node.name, host)  # a mirror, never a public registry
    assert seen_images


def test_prod_fleets_are_registered_after_the_repositories_they_pull_from(plan_stack):
    """The node role may not create a repository, so each fleet depends on the cache that makes them."""
    capture = plan_stack("prod").capture
    cache = capture.one("inference-infra:aws:PullThroughCache")
    fleets = [
        r
        for r in capture.resources
        if r.type in ("inference-infra:aws:GpuFleet", "inference-infra:aws:InferentiaFleet")
    ]
    assert len(fleets) >= 4
    # depends_on a component is sent to the engine as its children
    repositories = {r.urn for r in capture.children(cache) if r.type == REPOSITORY}
    assert repositories
    for fleet in fleets:
        assert repositories <= set(fleet.dependencies), fleet.name
