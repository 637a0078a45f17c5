"""The plan on programs written by others: remote components, data sources, secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import plan, render_table

# The reference dev stack's policy config: a program of another project gets it only when asked.
DEV_POLICY_CONFIG = Path(__file__).resolve().parents[3] / "policy" / "config" / "dev.json"

REMOTE = """
import pulumi


class Vpc(pulumi.ComponentResource):
    # What a generated multi-language SDK (awsx.ec2.Vpc) does: remote=True, outputs as None props.
    def __init__(self, name, opts=None):
        props = {"cidr_block": "10.0.0.0/16", "vpc_id": None, "nat_gateways": None}
        super().__init__("awsx:ec2:Vpc", name, props, opts, remote=True)

    @property
    @pulumi.getter(name="vpcId")
    def vpc_id(self):
        return pulumi.get(self, "vpc_id")

vpc = Vpc("spoke2-vpc")
pulumi.export("vpc_id", vpc.vpc_id)
"""


def test_plan_lists_remote_component_with_unknown_outputs_and_a_warning(pulumi_project):
    result = plan(pulumi_project(REMOTE), "dev")
    doc = result.as_json()
    vpc = next(r for r in doc["resources"] if r["type"] == "awsx:ec2:Vpc")
    assert vpc["custom"] is False
    assert vpc["remote"] is True
    assert vpc["outputs"] == "[unknown]"
    assert doc["outputs"] == {"vpc_id": "[unknown]"}
    assert any("awsx:ec2:Vpc 'spoke2-vpc'" in w and "not visible offline" in w for w in doc["warnings"])
    table = render_table(result)
    assert "output: vpc_id = [unknown]" in table
    assert "04da6b54" not in table + json.dumps(doc)
    assert result.exit_code == 0


@pytest.mark.parametrize("stack", ["dev"])
def test_plan_remote_component_children_are_not_registered(pulumi_project, stack):
    result = plan(pulumi_project(REMOTE), stack)
    vpc = result.capture.one("awsx:ec2:Vpc")
    assert result.capture.children(vpc) == []


AWSX = """
import pulumi
import pulumi_aws as aws
import pulumi_awsx as awsx

vpc = awsx.ec2.Vpc("spoke2-vpc", cidr_block="10.2.0.0/16",
                   nat_gateways=awsx.ec2.NatGatewayConfigurationArgs(strategy=awsx.ec2.NatGatewayStrategy.SINGLE))
aws.ec2.SecurityGroup("app", vpc_id=vpc.vpc_id, description="app",
                      tags={"CostCenter": "ml", "Environment": "dev", "Owner": "infra"})
pulumi.export("vpcId", vpc.vpc_id)
pulumi.export("privateSubnetIds", vpc.private_subnet_ids)
pulumi.export("natGateways", vpc.nat_gateways.apply(lambda gws: len(gws)))
"""


def test_plan_runs_a_program_using_the_real_awsx_vpc(pulumi_project):
    # The shape that crashed the plan (pulumi-awsx 3.x, a generated multi-language SDK): its
    # typed outputs (nat_gateways: list of NatGateway) must not be fed back as echoed dicts.
    result = plan(pulumi_project(AWSX), "dev")
    doc = result.as_json()
    assert result.exit_code == 0, doc
    vpc = next(r for r in doc["resources"] if r["type"] == "awsx:ec2:Vpc")
    assert (vpc["custom"], vpc["remote"], vpc["outputs"]) == (False, True, "[unknown]")
    assert set(doc["outputs"].values()) == {"[unknown]"}
    assert sorted(doc["outputs"]) == ["natGateways", "privateSubnetIds", "vpcId"]
    group = result.capture.one("aws:ec2/securityGroup:SecurityGroup")
    assert group.props["description"] == "app"
    assert any("awsx:ec2:Vpc 'spoke2-vpc'" in w and "not visible offline" in w for w in doc["warnings"])


EKS = """
import json
import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

cluster = eks.Cluster("gpu", skip_default_node_group=True)
role = aws.iam.Role("nodes", assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": []}))
eks.ManagedNodeGroup("gpu-nodes", cluster=cluster, node_role=role, instance_types=["g5.xlarge"],
                     scaling_config={"desired_size": 1, "min_size": 0, "max_size": 2})
aws.eks.NodeGroup("direct", cluster_name=cluster.eks_cluster.name, node_role_arn=role.arn,
                  subnet_ids=["subnet-1"], instance_types=["g5.12xlarge"],
                  scaling_config={"desired_size": 2, "min_size": 0, "max_size": 4})
"""


def test_plan_runs_a_program_passing_resources_to_real_pulumi_eks_components(pulumi_project):
    # pulumi-eks 4.x: ManagedNodeGroup takes the Cluster and the Role themselves (resource references
    # in its inputs), which the Policy SDK cannot deserialize; the engine hands analyzers their ids.
    result = plan(pulumi_project(EKS), "dev", policy_config=DEV_POLICY_CONFIG)  # a $5/hour budget
    doc = result.as_json()
    assert result.policy.evaluated
    types = {r["type"]: r for r in doc["resources"]}
    assert types["eks:index:ManagedNodeGroup"]["remote"] is True
    group = result.capture.one("eks:index:ManagedNodeGroup")
    assert group.props["cluster"].startswith("urn:pulumi:dev::outside::eks:index:Cluster::gpu")
    shown = next(r for r in doc["resources"] if r["name"] == "gpu-nodes")["props"]
    assert shown["cluster"] == "urn:pulumi:dev::outside::eks:index:Cluster::gpu"  # not the wire envelope
    assert shown["nodeRole"] == "urn:pulumi:dev::outside::aws:iam/role:Role::nodes"
    direct = next(i for i in doc["cost"]["items"] if i["urn"].endswith("::direct"))
    assert direct["basis"].startswith("4 x g5.12xlarge on-demand")  # a range, at its maximum (#34)
    assert direct["expected_size"] == 2
    budget = [v for v in doc["policy"]["violations"] if v["policy"] == "accelerator-spend-budget"]
    assert budget  # the node group outside the components is priced and judged


ZONES = """
import pulumi
import pulumi_aws as aws

zones = aws.get_availability_zones(state="available")
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
for i, (name, zone_id) in enumerate(zip(zones.names, zones.zone_ids)):
    aws.ec2.Subnet(f"subnet-{name}", vpc_id=vpc.id, availability_zone=name, cidr_block=f"10.0.{i}.0/24",
                   tags={"zone_id": zone_id})
doc = aws.iam.get_policy_document(statements=[{"actions": ["s3:GetObject"], "resources": ["*"]}])
aws.iam.Policy("read", policy=doc.json)
zone = aws.route53.get_zone(name="example.com")
pulumi.export("zone", zone.zone_id)
"""


def test_plan_makes_one_subnet_per_real_zone_of_the_region(pulumi_project):
    result = plan(pulumi_project(ZONES, {"dev": "config:\n  aws:region: us-east-2\n"}), "dev")
    subnets = result.capture.of_type("aws:ec2/subnet:Subnet")
    assert sorted(s.props["availabilityZone"] for s in subnets) == ["us-east-2a", "us-east-2b", "us-east-2c"]
    assert sorted(s.props["tags"]["zone_id"] for s in subnets) == ["use2-az1", "use2-az2", "use2-az3"]
    policy = json.loads(result.capture.one("aws:iam/policy:Policy").props["policy"])
    assert policy["Statement"] == [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]
    assert result.as_json()["outputs"]["zone"].startswith("Z")
    assert result.capture.unmocked_invokes == []


UNMOCKED = """
import pulumi
import pulumi_aws as aws

key = aws.kms.get_key(key_id="alias/weights")
pulumi.export("key", key.key_id)
"""

UNMOCKED_FAILS = """
import pulumi_aws as aws

key = aws.kms.get_key(key_id="alias/weights")
aws.s3.BucketV2("b", bucket=key.arn.split(":")[4])
"""


def test_plan_carries_on_past_an_unanswered_data_source_and_names_it(pulumi_project):
    result = plan(pulumi_project(UNMOCKED), "dev")
    assert result.as_json()["outputs"] == {"key": "alias/weights"}
    assert any("aws:kms/getKey:getKey" in w for w in result.warnings())


def test_plan_rejects_program_failing_on_unanswered_data_source_with_exit_4(pulumi_project, capsys):
    from inference_infra.components.cli import main

    code = main(["plan", "--cwd", str(pulumi_project(UNMOCKED_FAILS)), "--stack", "dev"])
    err = capsys.readouterr().err
    assert code == 4
    assert "aws:kms/getKey:getKey" in " ".join(err.split())


SECRET = "hunter2-planted-value"
SECRETS = f"""
import pulumi
import pulumi_aws as aws

password = pulumi.Output.secret("{SECRET}")
aws.ssm.Parameter("db", type="SecureString", value=password)
password.apply(lambda v: pulumi.log.info(f"connecting with {{v}}"))
password.apply(lambda v: pulumi.log.warn(f"password {{v}} is short"))
pulumi.export("password", password)
"""


def test_plan_never_prints_a_secret_in_outputs_props_notes_or_warnings(pulumi_project):
    result = plan(pulumi_project(SECRETS), "dev")
    text = render_table(result) + json.dumps(result.as_json())
    assert SECRET not in text
    assert result.as_json()["outputs"] == {"password": "[secret]"}
    assert any("connecting with [secret]" in n for n in result.notes())
    assert any("password [secret] is short" in w for w in result.warnings())


def test_plan_rejects_failing_program_without_printing_the_secret(pulumi_project, capsys):
    from inference_infra.components.cli import main

    failing = SECRETS + "\npassword.apply(lambda v: (_ for _ in ()).throw(ValueError(f'bad {v}')))\n"
    code = main(["plan", "--cwd", str(pulumi_project(failing)), "--stack", "dev"])
    err = capsys.readouterr().err
    assert code == 2
    assert SECRET not in err.replace("\n", "")
    assert "[secret]" in err


CONFIG = """
import pulumi

config = pulumi.Config()
pulumi.export("mode", config.get("mode"))
pulumi.export("replicas", config.get_int("replicas"))
pulumi.export("debug", config.get_bool("debug"))
"""


def test_plan_reads_project_files_as_yaml_1_2_with_config_defaults(pulumi_project):
    root = pulumi_project(CONFIG, {"dev": "config:\n  aws:regoin: us-east-2\n"})
    (root / "Pulumi.yaml").write_text(
        "name: outside\nruntime: python\nconfig:\n"
        "  mode:\n    type: string\n    default: off\n"
        "  replicas:\n    type: integer\n    default: 3\n"
        "  debug:\n    type: boolean\n    default: false\n"
    )
    result = plan(root, "dev")
    assert result.as_json()["outputs"] == {"mode": "off", "replicas": 3, "debug": False}
    typo = [w for w in result.warnings() if "aws:regoin is not a setting" in w]
    assert typo
    assert "did you mean aws:region?" in typo[0]


BAD_COMPONENT = """
from inference_infra.components.aws import GpuFleet, GpuFleetArgs

GpuFleet("serving", GpuFleetArgs(instance_type="g5.nonsense", vpc_id="vpc-1", subnets=["subnet-1"]))
"""


def test_plan_rejects_bad_component_input_naming_the_program_line(pulumi_project):
    from inference_infra.components.offline_plan import ProgramError

    with pytest.raises(ProgramError) as caught:
        plan(pulumi_project(BAD_COMPONENT), "dev")
    message = str(caught.value)
    assert "__main__.py:4:" in message
    assert "Pulumi.dev.yaml" not in message


def test_plan_rejects_missing_config_naming_the_stack_file(pulumi_project):
    from inference_infra.components.offline_plan import ProgramError

    with pytest.raises(ProgramError) as caught:
        plan(pulumi_project("import pulumi\npulumi.Config().require('size')\n"), "dev")
    assert str(caught.value).startswith("Pulumi.dev.yaml: ")


OWN_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def no_buckets(args, report_violation):
    if args.resource_type == "aws:s3/bucketV2:BucketV2":
        report_violation("buckets are not allowed here")


PolicyPack(
    name="own-pack",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[ResourceValidationPolicy(name="no-buckets", description="No buckets.", validate=no_buckets)],
)
"""


def _own_pack(root):
    pack = root / "policy"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (pack / "__main__.py").write_text(OWN_PACK)
    return pack


def test_plan_runs_the_projects_own_policy_pack_by_default(pulumi_project):
    root = pulumi_project("import pulumi_aws as aws\naws.s3.BucketV2('b')\n")
    _own_pack(root)
    result = plan(root, "dev")
    assert [p["name"] for p in result.policy.as_json()["packs"]] == [result.policy.pack]
    assert "own-pack" in result.policy.pack
    assert [v.policy for v in result.policy.violations] == ["no-buckets"]
    assert result.exit_code == 1


def test_plan_runs_every_policy_pack_given_and_names_them(pulumi_project):
    from inference_infra.components.offline_plan import DEFAULT_POLICY_PACK

    root = pulumi_project("import pulumi_aws as aws\naws.s3.BucketV2('b')\n")
    own = _own_pack(root)
    result = plan(root, "dev", policy_pack=[own, DEFAULT_POLICY_PACK])
    names = [p["name"] for p in result.policy.as_json()["packs"]]
    assert len(names) == 2
    assert "own-pack" in names[0]
    assert "inference-infra" in names[1]
    assert "no-buckets" in {v.policy for v in result.policy.violations}
