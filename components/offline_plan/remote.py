"""Children of multi-language components inferred from the component's own inputs.

A remote component's children are built by its provider plugin, which the offline plan does not
run. For the pulumi-eks components that launch worker nodes, the inputs say exactly which node
resource the plugin creates, so the plan adds that resource (marked `inferred`) and it is priced and
checked by policy like one the program wrote by hand:

- `eks:index:ManagedNodeGroup` creates an `aws:eks/nodeGroup:NodeGroup` from the same inputs, and
  a launch template when an option needs one (`enableIMDSv2` sets its metadata options);
- `eks:index:Cluster` (unless `skipDefaultNodeGroup` or Fargate) and `eks:index:NodeGroup[V2]`
  create a self-managed group: a launch template and an Auto Scaling group of `instanceType`
  (`nodeGroupOptions` first on a cluster), inferred only when that type is an accelerator type.

Kubernetes `yaml/v2` ConfigGroup and ConfigFile register the objects of their manifests (`yaml`,
`objs`, local `files`/`file`), which are read here the same way.

Behaviour and defaults are pulumi-eks's (nodejs/eks/nodes/nodegroup.ts at commit 27c7b663, read
2026-11-24): managed groups desired 2, min 1, max 2; self-managed groups t3.medium, desired 2, min
1, max 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components import bounded_yaml
from inference_infra.components.offline_plan.mocks import digest
from inference_infra.components.offline_plan.model import UNKNOWN, CapturedResource
from inference_infra.components.resources import is_aws_accelerator_type

MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
CLUSTER = "eks:index:Cluster"
SELF_MANAGED = frozenset({"eks:index:NodeGroup", "eks:index:NodeGroupV2"})
YAML_GROUPS = frozenset({"kubernetes:yaml/v2:ConfigGroup", "kubernetes:yaml/v2:ConfigFile"})

# Inputs of eks:index:ManagedNodeGroup that aws:eks/nodeGroup:NodeGroup takes as they are.
_NODE_GROUP_INPUTS = (
    "amiType",
    "capacityType",
    "diskSize",
    "instanceTypes",
    "labels",
    "launchTemplate",
    "nodeGroupName",
    "releaseVersion",
    "remoteAccess",
    "subnetIds",
    "tags",
    "taints",
    "version",
)
# Options for which pulumi-eks gives a managed node group its own launch template.
_NEEDS_TEMPLATE = (
    "kubeletExtraArgs",
    "bootstrapExtraArgs",
    "bottlerocketSettings",
    "nodeadmExtraOptions",
    "enableIMDSv2",
    "userData",
    "amiId",
    "enableEfaSupport",
)


def _imds(required: bool) -> dict[str, Any]:
    return {
        "httpTokens": "required" if required else "optional",
        "httpEndpoint": "enabled",
        "httpPutResponseHopLimit": 2,
    }


def inferred_children(component: CapturedResource) -> list[CapturedResource]:
    """The resources a remote component's plugin would create, as far as its inputs say."""
    props = component.wire_props
    if component.type in YAML_GROUPS:
        return _manifests(component, props)
    if component.type == MANAGED_NODE_GROUP:
        return _managed_node_group(component, props)
    if component.type == CLUSTER:
        if props.get("skipDefaultNodeGroup") is True or _set(props.get("fargate")):
            return []
        options = props.get("nodeGroupOptions")
        merged = {**props, **options} if isinstance(options, Mapping) else props
        return _self_managed(component, merged, f"{component.name}-nodeGroup")
    if component.type in SELF_MANAGED:
        return _self_managed(component, props, component.name)
    return []


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _set(value: Any) -> bool:
    return value not in (None, False, "", {}, [])


def _child(
    component: CapturedResource, type_: str, name: str, props: Mapping[str, Any], ident: str
) -> CapturedResource:
    qualified = f"{component.type}${type_}"
    stack_project = component.urn.split("::")[:2]
    urn = "::".join([*stack_project, qualified, name])
    return CapturedResource(
        urn=urn,
        type=type_,
        name=name,
        parent=component.urn,
        custom=True,
        wire_props=dict(props),
        id=ident,
        provider=component.provider,
        dependencies=component.dependencies,
        inferred=True,
    )


def _template(component: CapturedResource, name: str, props: Mapping[str, Any]) -> CapturedResource:
    return _child(
        component, "aws:ec2/launchTemplate:LaunchTemplate", name, props, f"lt-{digest(component.urn, name)}"
    )


def _managed_node_group(component: CapturedResource, props: Mapping[str, Any]) -> list[CapturedResource]:
    group = {k: props[k] for k in _NODE_GROUP_INPUTS if k in props}
    group["clusterName"] = props.get("clusterName", UNKNOWN)
    group["nodeRoleArn"] = props.get("nodeRoleArn", UNKNOWN)
    group["scalingConfig"] = props.get("scalingConfig") or {"desiredSize": 2, "minSize": 1, "maxSize": 2}
    out: list[CapturedResource] = []
    if "launchTemplate" not in props and any(props.get(k) is not None for k in _NEEDS_TEMPLATE):
        template_props: dict[str, Any] = {}
        if isinstance(props.get("enableIMDSv2"), bool):
            template_props["metadataOptions"] = _imds(props["enableIMDSv2"])
        if props.get("diskSize") is not None:
            template_props["blockDeviceMappings"] = [{"ebs": {"volumeSize": group.pop("diskSize", None)}}]
        template = _template(component, f"{component.name}-launchTemplate", template_props)
        group["launchTemplate"] = {"id": template.id, "version": "$Latest"}
        out.append(template)
    ident = f"{component.name}-{digest(component.urn, length=8)}"
    out.append(_child(component, "aws:eks/nodeGroup:NodeGroup", component.name, group, ident))
    return out


def _self_managed(component: CapturedResource, props: Mapping[str, Any], name: str) -> list[CapturedResource]:
    instance_type = props.get("instanceType") or "t3.medium"
    if not is_aws_accelerator_type(instance_type):  # CPU groups stay unseen
        return []
    root = {  # pulumi-eks's root volume: 20 GiB gp2, not encrypted, unless the inputs say otherwise
        "volumeSize": props.get("nodeRootVolumeSize", 20),
        "volumeType": props.get("nodeRootVolumeType", "gp2"),
        "encrypted": str(props.get("nodeRootVolumeEncrypted", False)).lower(),
        "deleteOnTermination": str(props.get("nodeRootVolumeDeleteOnTermination", True)).lower(),
    }
    template_props: dict[str, Any] = {
        "instanceType": instance_type,
        "tags": props.get("tags") or {},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": root}],
    }
    if isinstance(props.get("metadataOptions"), Mapping):  # NodeGroupV2
        template_props["metadataOptions"] = props["metadataOptions"]
    if _set(props.get("spotPrice")):
        template_props["instanceMarketOptions"] = {
            "marketType": "spot",
            "spotOptions": {"maxPrice": props["spotPrice"]},
        }
    if "nodeAssociatePublicIpAddress" in props:
        template_props["networkInterfaces"] = [
            {"associatePublicIpAddress": str(props["nodeAssociatePublicIpAddress"]).lower()}
        ]
    template = _template(component, f"{name}-launchTemplate", template_props)
    if isinstance(props.get("launchTemplateTagSpecifications"), list):  # NodeGroupV2
        template_props["tagSpecifications"] = props["launchTemplateTagSpecifications"]
    tags = {**_mapping(props.get("tags")), **_mapping(props.get("autoScalingGroupTags"))}
    group = {
        "tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in tags.items()],
        "desiredCapacity": props.get("desiredCapacity", 2),
        "minSize": props.get("minSize", 1),
        "maxSize": props.get("maxSize", 2),
        "launchTemplate": {"id": template.id, "version": "$Latest"},
        "vpcZoneIdentifiers": props.get("nodeSubnetIds") or UNKNOWN,
    }
    group_id = f"{name}-{digest(component.urn, name, length=8)}"
    return [template, _child(component, "aws:autoscaling/group:Group", name, group, group_id)]


def _manifests(component: CapturedResource, props: Mapping[str, Any]) -> list[CapturedResource]:
    """The objects of a yaml/v2 ConfigGroup or ConfigFile: inline YAML, objs, and local files
    (paths relative to the project root, where the program runs; URLs are not fetched)."""
    import glob

    import yaml

    texts: list[str] = []
    inline = props.get("yaml")
    texts += [t for t in (inline if isinstance(inline, list) else [inline]) if isinstance(t, str)]
    files = props.get("files") if isinstance(props.get("files"), list) else [props.get("file")]
    for pattern in files:
        if isinstance(pattern, str) and "://" not in pattern:
            for path in sorted(glob.glob(pattern)):
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts.append(f.read())
    objects = [o for o in props.get("objs") or [] if isinstance(o, Mapping)]
    for text in texts:
        try:
            objects += [o for o in bounded_yaml.load_all(text) if isinstance(o, Mapping)]
        except yaml.YAMLError:
            continue  # the plugin reports bad YAML at deploy time; nothing to infer
    out = []
    for obj in objects:
        api, kind = obj.get("apiVersion"), obj.get("kind")
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        name = meta.get("name")
        if not (isinstance(api, str) and isinstance(kind, str) and isinstance(name, str)):
            continue
        namespace = meta.get("namespace")
        child_name = f"{component.name}:{namespace}/{name}" if namespace else f"{component.name}:{name}"
        type_ = f"kubernetes:{api if '/' in api else 'core/' + api}:{kind}"
        out.append(_child(component, type_, child_name, obj, f"{namespace or 'default'}/{name}"))
    return out
