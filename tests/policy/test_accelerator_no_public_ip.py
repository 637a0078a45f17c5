"""accelerator-no-public-ip: no public or external IP on accelerator machines."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import accelerator_no_public_ip as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GCE = "gcp:compute/instance:Instance"
GCE_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
TPU = "gcp:tpu/v2Vm:V2Vm"
QUEUED = "gcp:tpu/v2QueuedResource:V2QueuedResource"
PUBLIC_FIX = "set it to false and reach the host through a load balancer, VPN or SSM."
UNSET = "so the subnet's mapPublicIpOnLaunch decides whether it gets a public IP; set it to false."


def test_no_public_ip_passes_explicitly_private_machines(check):
    assert (
        check(rule, INSTANCE, {"instanceType": "g5.xlarge", "associatePublicIpAddress": False}) == Outcome()
    )
    template = {"instanceType": "g5.xlarge", "networkInterfaces": [{"associatePublicIpAddress": "false"}]}
    assert check(rule, TEMPLATE, template) == Outcome()
    assert (
        check(rule, GCE, {"machineType": "g2-standard-4", "networkInterfaces": [{"network": "n"}]})
        == Outcome()
    )
    assert check(
        rule, TPU, {"acceleratorType": "v5litepod-8", "networkConfig": {"enableExternalIps": False}}
    ) == (Outcome())


def test_no_public_ip_rejects_a_public_aws_instance_and_template(check):
    outcome = check(
        rule, INSTANCE, {"instanceType": "p5.48xlarge", "associatePublicIpAddress": True}, name="gpu"
    )
    assert outcome.violations == (
        "aws:ec2/instance:Instance 'gpu' runs p5.48xlarge with a public IP "
        f"(associatePublicIpAddress is true); {PUBLIC_FIX}",
    )
    template = {"instanceType": "g5.xlarge", "networkInterfaces": [{"associatePublicIpAddress": "true"}]}
    assert check(rule, TEMPLATE, template, name="lt").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'lt' runs g5.xlarge with a public IP "
        f"(networkInterfaces[0].associatePublicIpAddress is 'true'); {PUBLIC_FIX}",
    )


def test_no_public_ip_rejects_an_instance_leaving_it_to_the_subnet_unless_configured_not_to(check):
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge"}, name="gpu").violations == (
        f"aws:ec2/instance:Instance 'gpu' runs g5.xlarge with associatePublicIpAddress unset, {UNSET}",
    )
    from_template = {"instanceType": "g5.xlarge", "launchTemplate": {"id": "lt-1"}}
    assert check(rule, INSTANCE, from_template, name="gpu").violations == (
        f"aws:ec2/instance:Instance 'gpu' runs g5.xlarge with associatePublicIpAddress unset, {UNSET}",
    )
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge"}, {"requireExplicitOnAws": False}) == Outcome()


def test_no_public_ip_passes_a_launch_template_that_asks_for_no_public_ip(check):
    # A template launches nothing itself; the instances launched from it are judged on their own.
    assert check(rule, TEMPLATE, {"instanceType": "g5.xlarge"}) == Outcome()
    interface = {"instanceType": "g5.xlarge", "networkInterfaces": [{"deviceIndex": 0}]}
    assert check(rule, TEMPLATE, interface) == Outcome()
    untyped = {"networkInterfaces": [{"associatePublicIpAddress": "true"}]}
    assert check(rule, TEMPLATE, untyped, name="any").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'any' runs instances of a type chosen at launch with a public "
        f"IP (networkInterfaces[0].associatePublicIpAddress is 'true'); {PUBLIC_FIX}",
    )


def test_no_public_ip_leaves_attached_interfaces_to_themselves(check):
    attached = {"instanceType": "g5.xlarge", "networkInterfaces": [{"networkInterfaceId": "eni-1"}]}
    assert check(rule, INSTANCE, attached) == Outcome()


def test_no_public_ip_rejects_gcp_access_configs_and_tpu_external_ips(check):
    vm = {"machineType": "a3-highgpu-8g", "networkInterfaces": [{"network": "n", "accessConfigs": [{}]}]}
    assert check(rule, GCE_TEMPLATE, vm, name="tpl").violations == (
        "gcp:compute/instanceTemplate:InstanceTemplate 'tpl' runs a3-highgpu-8g with an external IP "
        "(networkInterfaces[0].accessConfigs); remove the access config and use Cloud NAT for egress.",
    )
    tpu = {"acceleratorType": "v5litepod-8", "networkConfig": {"enableExternalIps": True}}
    assert check(rule, TPU, tpu, name="tpu").violations == (
        "gcp:tpu/v2Vm:V2Vm 'tpu' runs v5litepod-8 with an external IP "
        "(networkConfig.enableExternalIps is true); set it to false and use Cloud NAT for egress.",
    )
    node = {"acceleratorType": "v6e-8", "networkConfig": {"enableExternalIps": True}}
    queued = {"tpu": {"nodeSpecs": [{"node": node}]}}
    assert check(rule, QUEUED, queued, name="q").violations == (
        "gcp:tpu/v2QueuedResource:V2QueuedResource 'q' runs v6e-8 with an external IP "
        "(tpu.nodeSpecs[0].node.networkConfig.enableExternalIps is true); set it to false and use Cloud NAT "
        "for egress.",
    )


def test_no_public_ip_does_not_apply_to_cpu_machines(check):
    reason = (
        "applies to accelerator instances, VMs, TPU slices and the templates that launch them, "
        "to AWS launch templates without an instance type, and to Elastic IPs on accelerator instances"
    )
    assert check(rule, INSTANCE, {"instanceType": "t3.micro", "associatePublicIpAddress": True}) == Outcome(
        not_applicable=reason
    )


def test_no_public_ip_does_not_judge_values_not_known_yet(check, sdk):
    props = {"machineType": "g2-standard-4", "networkInterfaces": [{"accessConfigs": UNKNOWN}]}
    assert check(rule, GCE, props) == Outcome(unknown=("networkInterfaces[0].accessConfigs",))
    assert check(rule, QUEUED, {"tpu": UNKNOWN}) == Outcome(
        not_applicable=check(rule, QUEUED, {}).not_applicable
    )
    wire = {"instanceType": "g5.xlarge", "associatePublicIpAddress": WIRE_UNKNOWN}
    assert sdk(rule, INSTANCE, wire) == (
        [],
        None,
        "string value at .r.associatePublicIpAddress can't be known during preview",  # <resource>.<path>,
    )


def test_no_public_ip_on_captured_resources(plan_of, run_pack):
    aws.ec2.Instance("private", instance_type="g5.xlarge", ami="ami-1", associate_public_ip_address=False)
    aws.ec2.Instance("public", instance_type="g5.xlarge", ami="ami-1", associate_public_ip_address=True)
    gcp.compute.Instance(
        "vm",
        machine_type="g2-standard-4",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default", "access_configs": [{}]}],
    )
    report = run_pack(plan_of(), rule.NAME)
    assert sorted(v.message for v in report.violations) == [
        "aws:ec2/instance:Instance 'public' runs g5.xlarge with a public IP "
        f"(associatePublicIpAddress is true); {PUBLIC_FIX}",
        "gcp:compute/instance:Instance 'vm' runs g2-standard-4 with an external IP "
        "(networkInterfaces[0].accessConfigs); remove the access config and use Cloud NAT for egress.",
    ]


SAGEMAKER = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def test_no_public_ip_does_not_apply_to_sagemaker_hosted_instances(check):
    endpoint = {"productionVariants": [{"instanceType": "ml.g5.2xlarge", "initialInstanceCount": 1}]}
    assert check(rule, SAGEMAKER, endpoint).not_applicable.startswith("SageMaker runs endpoint instances")


def test_no_public_ip_rejects_a_node_group_without_a_launch_template(check):
    group = {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 1}}
    assert check(rule, NODE_GROUP, group, name="ng").violations == (
        "aws:eks/nodeGroup:NodeGroup 'ng' runs g5.xlarge without a launch template, so the subnets' "
        "mapPublicIpOnLaunch decides whether its instances get public IPs; launch them from a template whose "
        "network interface sets associatePublicIpAddress to false, or use subnets that map none.",
    )


def _group(name: str, template: aws.ec2.LaunchTemplate) -> None:
    aws.autoscaling.Group(
        name, min_size=0, max_size=2, vpc_zone_identifiers=["subnet-1"], launch_template={"id": template.id}
    )


def test_no_public_ip_judges_a_group_by_its_launch_templates_interface(plan_of, run_pack):
    private = aws.ec2.LaunchTemplate(
        "private", instance_type="g5.xlarge", network_interfaces=[{"associate_public_ip_address": "false"}]
    )
    unset = aws.ec2.LaunchTemplate("unset", instance_type="g5.xlarge")
    public = aws.ec2.LaunchTemplate(
        "public", instance_type="g5.xlarge", network_interfaces=[{"associate_public_ip_address": "true"}]
    )
    for template in (private, unset, public):
        _group(f"{template._name}-group", template)
    report = run_pack(plan_of(), rule.NAME)
    found = {(v.urn.rsplit("::", 1)[1], v.message) for v in report.violations}
    assert found == {
        (
            "public-group",
            "aws:autoscaling/group:Group 'public-group' runs g5.xlarge from a launch template that asks "
            "for a public IP; set associatePublicIpAddress to false on its network interface.",
        ),
        (
            "unset-group",
            "aws:autoscaling/group:Group 'unset-group' runs g5.xlarge from a launch template that leaves "
            "associatePublicIpAddress unset, so the subnets' mapPublicIpOnLaunch decides whether its "
            "instances get public IPs; set it to false on the template's network interface (the group "
            "cannot set it).",
        ),
        (
            "public",
            "aws:ec2/launchTemplate:LaunchTemplate 'public' runs g5.xlarge with a public IP "
            f"(networkInterfaces[0].associatePublicIpAddress is 'true'); {PUBLIC_FIX}",
        ),
    }


def test_accelerator_no_public_ip_rejects_elastic_ips_on_accelerator_instances(plan_of, run_pack):
    private = {"associate_public_ip_address": False, "metadata_options": {"http_tokens": "required"}}
    gpu = aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-1", **private)
    cpu = aws.ec2.Instance("cpu", instance_type="m5.large", ami="ami-1", **private)
    aws.ec2.Eip("direct", instance=gpu.id, domain="vpc")
    aws.ec2.Eip("on-cpu", instance=cpu.id, domain="vpc")  # not an accelerator: fine here
    aws.ec2.Eip("nat", domain="vpc")  # not attached to anything
    interface = aws.ec2.NetworkInterface("eni", subnet_id="subnet-1")
    aws.ec2.NetworkInterfaceAttachment(
        "eni-on-gpu", instance_id=gpu.id, network_interface_id=interface.id, device_index=1
    )
    loose = aws.ec2.Eip("loose", domain="vpc")
    aws.ec2.EipAssociation("through-eni", allocation_id=loose.id, network_interface_id=interface.id)
    report = run_pack(plan_of(), rule.NAME)
    fix = "release the address and reach the host through a load balancer, VPN or SSM."
    instance = "aws:ec2/instance:Instance 'gpu' (g5.xlarge)"
    assert sorted(v.message for v in report.violations) == [
        f"aws:ec2/eip:Eip 'direct' gives accelerator instance {instance} a public IP (instance); {fix}",
        f"aws:ec2/eipAssociation:EipAssociation 'through-eni' gives accelerator instance {instance} a public "
        "IP (networkInterfaceId through network interface aws:ec2/networkInterface:NetworkInterface 'eni'); "
        f"{fix}",
    ]


def test_accelerator_no_public_ip_passes_an_elastic_ip_for_a_nat_gateway(plan_of, run_pack):
    aws.ec2.Eip("nat", domain="vpc")
    report = run_pack(plan_of(), rule.NAME)
    assert report.violations == []
    assert [n.reason for n in report.not_applicable if n.policy == rule.NAME] == [
        f"not applicable to any of the 2 resources: applies to {rule.APPLIES_TO}; an Elastic IP not attached "
        "to an instance or network interface"
    ]
