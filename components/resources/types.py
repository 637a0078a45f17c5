"""Resource type tokens the readers, the pricing and the policies name (the engine's `type`)."""

from __future__ import annotations

import re

# --- machines and what launches them -----------------------------------------------------------
AWS_INSTANCE = "aws:ec2/instance:Instance"
AWS_SPOT_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# An Auto Scaling group's legacy template (instance type, spot price, user data; no tags).
AWS_LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
AWS_CAPACITY_RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"
AWS_CAPACITY_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
AWS_AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
AWS_EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_EC2_FLEET = "aws:ec2/fleet:Fleet"
AWS_SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
AWS_SAGEMAKER_ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
AWS_BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
GCP_INSTANCE = "gcp:compute/instance:Instance"
GCP_INSTANCE_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
GCP_REGION_INSTANCE_TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GCP_INSTANCE_GROUP_MANAGER = "gcp:compute/instanceGroupManager:InstanceGroupManager"
GCP_REGION_INSTANCE_GROUP_MANAGER = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
GCP_GROUP_MANAGERS = frozenset({GCP_INSTANCE_GROUP_MANAGER, GCP_REGION_INSTANCE_GROUP_MANAGER})
GCP_RESERVATION = "gcp:compute/reservation:Reservation"
GCP_TPU_VM = "gcp:tpu/v2Vm:V2Vm"
GCP_TPU_NODE = "gcp:tpu/node:Node"
GCP_TPU_QUEUED_RESOURCE = "gcp:tpu/v2QueuedResource:V2QueuedResource"
GCP_GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GCP_GKE_CLUSTER = "gcp:container/cluster:Cluster"

# Resources that run accelerators (an instance, a VM, a TPU slice): these carry AutoShutdown.
RUNNING_TYPES = frozenset({AWS_INSTANCE, AWS_SPOT_REQUEST, GCP_INSTANCE, GCP_TPU_VM, GCP_TPU_NODE})
# Resources that start accelerator machines: instances, VMs, TPU slices and the templates, groups, node
# pools and fleets that launch them (not reservations, which only hold capacity). The policies judge these.
AWS_MACHINES = frozenset(
    {
        AWS_INSTANCE,
        AWS_SPOT_REQUEST,
        AWS_LAUNCH_TEMPLATE,
        AWS_AUTOSCALING_GROUP,  # judged when its instance type is visible (mixed-instances overrides)
        AWS_EKS_NODE_GROUP,
        AWS_EC2_FLEET,
        AWS_SPOT_FLEET,
        AWS_SAGEMAKER_ENDPOINT_CONFIG,
        AWS_BATCH_COMPUTE_ENVIRONMENT,
    }
)
GCP_MACHINES = frozenset(
    {
        GCP_INSTANCE,
        GCP_INSTANCE_TEMPLATE,
        GCP_REGION_INSTANCE_TEMPLATE,
        GCP_TPU_VM,
        GCP_TPU_NODE,
        GCP_TPU_QUEUED_RESOURCE,
        GCP_GKE_NODE_POOL,
        GCP_GKE_CLUSTER,
        GCP_INSTANCE_GROUP_MANAGER,  # judged when its template is visible (stack policies)
        GCP_REGION_INSTANCE_GROUP_MANAGER,
    }
)
# Resources that launch EC2 instances of their own (groups, node groups, fleets): their instances'
# metadata options and addressing come from a launch template, not from the resource.
AWS_LAUNCHERS = frozenset(
    {AWS_AUTOSCALING_GROUP, AWS_EKS_NODE_GROUP, AWS_EC2_FLEET, AWS_SPOT_FLEET, AWS_BATCH_COMPUTE_ENVIRONMENT}
)

# --- storage, network and services around the machines (priced by pricing.resources) ----------
AWS_VOLUME = "aws:ebs/volume:Volume"
AWS_NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
AWS_EIP = "aws:ec2/eip:Eip"
AWS_EIP_ASSOCIATION = "aws:ec2/eipAssociation:EipAssociation"
AWS_NETWORK_INTERFACE = "aws:ec2/networkInterface:NetworkInterface"
AWS_NETWORK_INTERFACE_ATTACHMENT = "aws:ec2/networkInterfaceAttachment:NetworkInterfaceAttachment"
AWS_VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
AWS_LOAD_BALANCERS = ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer")
AWS_EFS = "aws:efs/fileSystem:FileSystem"
AWS_ECS_SERVICE = "aws:ecs/service:Service"
AWS_ECS_TASK_DEFINITION = "aws:ecs/taskDefinition:TaskDefinition"
GCP_DISK = "gcp:compute/disk:Disk"
GCP_REGION_DISK = "gcp:compute/regionDisk:RegionDisk"
GCP_FILESTORE = "gcp:filestore/instance:Instance"
GCP_ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
GCP_FORWARDING_RULES = (
    "gcp:compute/forwardingRule:ForwardingRule",
    "gcp:compute/globalForwardingRule:GlobalForwardingRule",
)
GCP_ADDRESSES = ("gcp:compute/address:Address", "gcp:compute/globalAddress:GlobalAddress")

# --- Kubernetes objects that may launch accelerator nodes or render workloads (resources.k8s) ---
K8S_NODE_POOLS = ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool")
K8S_PROVISIONER = "kubernetes:karpenter.sh/v1alpha5:Provisioner"
K8S_COMPUTE_CLASS = re.compile(r"^kubernetes:cloud\.google\.com/v[0-9a-z]+:ComputeClass$")  # any version
K8S_HELM = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")

# Every token and group above (the package re-exports them: `from inference_infra.components.resources
# import AWS_INSTANCE`), listed from the module itself so a new one cannot be left out.
__all__ = sorted(name for name in globals() if name.isupper())
