"""Mock answers for the offline plan: resource ids and outputs, data-source results.

Values are deterministic (derived from the URN or the call's arguments) and
shaped like the provider's real answers: an instance id starts with `i-`, an
AMI look-up returns an `ami-` id, an IAM policy document renders real JSON.
A data source with no mock returns its arguments and an id (`carry_on`) and is
named in the plan's warnings; if the program still fails, the plan says which
data source had no offline answer (exit code 4).

More hooks live beside this module in `mocks_<area>.py` files, each with its
own `RESOURCE_HOOKS` and/or `INVOKE_HOOKS` dict; they are merged in at import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs, Mocks

ACCOUNT_ID = "123456789012"
GCP_PROJECT_NUMBER = "123456789012"


@dataclass
class MockContext:
    aws_region: str = "us-east-1"
    gcp_project: str = "offline-project"
    gcp_region: str = "us-central1"
    gcp_zone: str = "us-central1-a"

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> MockContext:
        ctx = cls()
        ctx.aws_region = config.get("aws:region") or ctx.aws_region
        ctx.gcp_project = config.get("gcp:project") or ctx.gcp_project
        ctx.gcp_region = config.get("gcp:region") or ctx.gcp_region
        ctx.gcp_zone = config.get("gcp:zone") or f"{ctx.gcp_region}-a"
        return ctx


def digest(*parts: object, length: int = 17) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:length]


ResourceHook = Callable[[MockResourceArgs, MockContext, str], dict[str, Any]]
InvokeHook = Callable[[Mapping[str, Any], MockContext], dict[str, Any]]

# EC2-style id prefixes by resource type.
_AWS_ID_PREFIX = {
    "aws:ec2/instance:Instance": "i-",
    "aws:ec2/securityGroup:SecurityGroup": "sg-",
    "aws:ec2/vpc:Vpc": "vpc-",
    "aws:ec2/subnet:Subnet": "subnet-",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt-",
    "aws:ec2/capacityReservation:CapacityReservation": "cr-",
    "aws:ec2/capacityBlockReservation:CapacityBlockReservation": "cr-",
    "aws:ec2/spotInstanceRequest:SpotInstanceRequest": "sir-",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce-",
    "aws:ec2/routeTable:RouteTable": "rtb-",
    "aws:ec2/internetGateway:InternetGateway": "igw-",
    "aws:ec2/natGateway:NatGateway": "nat-",
    "aws:ec2/eip:Eip": "eipalloc-",
    "aws:ec2/volume:Volume": "vol-",
    "aws:ec2/placementGroup:PlacementGroup": "pg-",
    "aws:efs/fileSystem:FileSystem": "fs-",
    "aws:efs/accessPoint:AccessPoint": "fsap-",
    "aws:efs/mountTarget:MountTarget": "fsmt-",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
}

_AWS_BUCKETS = frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"})

# ARN resource part by type, for types whose ARN is not "<module>:<region>:<account>:<name>".
_AWS_ARN = {
    "aws:iam/role:Role": "arn:aws:iam::{account}:role/{name}",
    "aws:iam/policy:Policy": "arn:aws:iam::{account}:policy/{name}",
    "aws:iam/instanceProfile:InstanceProfile": "arn:aws:iam::{account}:instance-profile/{name}",
    "aws:s3/bucket:Bucket": "arn:aws:s3:::{name}",
    "aws:s3/bucketV2:BucketV2": "arn:aws:s3:::{name}",
    "aws:lambda/function:Function": "arn:aws:lambda:{region}:{account}:function:{name}",
    "aws:sns/topic:Topic": "arn:aws:sns:{region}:{account}:{name}",
    "aws:sqs/queue:Queue": "arn:aws:sqs:{region}:{account}:{name}",
    "aws:cloudwatch/logGroup:LogGroup": "arn:aws:logs:{region}:{account}:log-group:{name}",
    "aws:scheduler/schedule:Schedule": "arn:aws:scheduler:{region}:{account}:schedule/default/{name}",
    "aws:kms/key:Key": "arn:aws:kms:{region}:{account}:key/{id}",
}


class OfflineMocks(Mocks):
    """Mocks for every provider the plan may meet; extend with `resource_hooks`/`invoke_hooks`."""

    def __init__(
        self, ctx: MockContext, on_invoke: Callable[[str, bool, Mapping[str, Any]], None] | None = None
    ) -> None:
        self.ctx = ctx
        self._on_invoke = on_invoke
        self._provider_regions: dict[str, str] = {}

    # -- resources ------------------------------------------------------------------------------

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict]:
        inputs = dict(args.inputs)
        if not args.custom:
            return None, inputs
        package = args.typ.split(":", 1)[0]
        if args.typ.startswith("pulumi:providers:"):
            if region := inputs.get("region"):
                self._provider_regions[args.name] = region
            return digest(args.typ, args.name), inputs
        seed = digest(args.typ, args.name)
        if package == "aws":
            ident, outputs = self._aws(args, inputs, seed)
        elif package == "gcp":
            ident, outputs = self._gcp(args, inputs, seed)
        else:
            ident, outputs = f"{args.name}-{seed[:8]}", {}
        hook = RESOURCE_HOOKS.get(args.typ)
        if hook is not None:
            outputs.update(hook(args, self.ctx, seed))
        return ident, {**inputs, **outputs}

    def _region_for(self, args: MockResourceArgs) -> str:
        if args.provider:
            name = args.provider.split("::")[-2] if "::" in args.provider else ""
            return self._provider_regions.get(name, self.ctx.aws_region)
        return self.ctx.aws_region

    def _aws(self, args: MockResourceArgs, inputs: dict, seed: str) -> tuple[str, dict]:
        prefix = _AWS_ID_PREFIX.get(args.typ)
        name = _text(inputs.get("name")) or _text(inputs.get("bucket")) or f"{args.name}-{seed[:7]}"
        ident = f"{prefix}{seed}" if prefix else name
        region = self._region_for(args)
        module = args.typ.split(":")[1].split("/")[0]
        template = _AWS_ARN.get(args.typ, "arn:aws:{module}:{region}:{account}:{kind}/{id}")
        kind = args.typ.rsplit(":", 1)[-1].lower()
        arn = template.format(
            module=module, region=region, account=ACCOUNT_ID, name=name, id=ident, kind=kind
        )
        outputs: dict[str, Any] = {"arn": arn}
        if args.typ in _AWS_BUCKETS:  # autonamed by the provider at check time, so known in preview
            outputs.update(bucket=name, bucketRegionalDomainName=f"{name}.s3.{region}.amazonaws.com")
        elif "name" not in inputs and args.typ not in _AWS_ID_PREFIX:
            outputs["name"] = name
        if isinstance(inputs.get("tags"), Mapping):
            outputs["tagsAll"] = dict(inputs["tags"])
        return ident, outputs

    def _gcp(self, args: MockResourceArgs, inputs: dict, seed: str) -> tuple[str, dict]:
        project = _text(inputs.get("project")) or self.ctx.gcp_project
        name = _text(inputs.get("name")) or f"{args.name}-{seed[:7]}"
        collection = args.typ.rsplit(":", 1)[-1].lower() + "s"
        where = f"zones/{inputs['zone']}" if _text(inputs.get("zone")) else "global"
        ident = f"projects/{project}/{where}/{collection}/{name}"
        outputs = {
            "name": name,
            "project": project,
            "selfLink": f"https://www.googleapis.com/compute/v1/{ident}",
        }
        if args.typ in _GCP_UNIQUE_LINKS:  # known once the template exists; the plan shows it
            outputs["selfLinkUnique"] = f"{outputs['selfLink']}?uniqueId={int(seed[:12], 16)}"
        if isinstance(inputs.get("labels"), Mapping):
            outputs["effectiveLabels"] = dict(inputs["labels"])
        return ident, outputs

    # -- data sources ---------------------------------------------------------------------------

    def call(self, args: MockCallArgs) -> dict:
        hook = INVOKE_HOOKS.get(args.token)
        if self._on_invoke is not None:
            self._on_invoke(args.token, hook is not None, args.args)
        return hook(args.args, self.ctx) if hook is not None else carry_on(args.token, args.args)


_GCP_UNIQUE_LINKS = frozenset(
    {
        "gcp:compute/instanceTemplate:InstanceTemplate",
        "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
    }
)


def carry_on(token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A data source with no offline answer: its arguments echoed and an id, so most programs go on.

    Fields the program reads that are not among its arguments stay absent (None);
    the plan warns that the answer is made up and names the data source.
    """
    return {
        **args,
        "id": f"offline-{digest(token, json.dumps(args, sort_keys=True, default=str), length=12)}",
    }


def _text(value: Any) -> str | None:
    """A string input, or None when it is absent or not known until deploy time (preview)."""
    return value if isinstance(value, str) and value else None


# -- resource outputs a program may read --------------------------------------------------------


def _aws_instance(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    n = int(seed[:6], 16)
    return {
        "privateIp": f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 4}",
        "privateDns": f"ip-10-0-0-{n % 250}.ec2.internal",
        "availabilityZone": args.inputs.get("availabilityZone") or f"{ctx.aws_region}a",
        "primaryNetworkInterfaceId": f"eni-{seed}",
        "instanceState": "running",
    }


def _random_secret(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    length = int(args.inputs.get("length") or 24)
    value = ("offline" + digest(seed, "secret", length=64))[:length]
    return {"result": value, "bcryptHash": "$2a$10$" + digest(seed, "bcrypt", length=53)}


def _random_id(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    width = int(args.inputs.get("byteLength") or 8)
    hexed = digest(seed, "id", length=2 * width)
    return {"hex": hexed, "dec": str(int(hexed, 16)), "b64Url": hexed, "b64Std": hexed}


def _gcp_service_account(args: MockResourceArgs, ctx: MockContext, _: str) -> dict[str, Any]:
    project = args.inputs.get("project") or ctx.gcp_project
    email = f"{args.inputs.get('accountId', args.name)}@{project}.iam.gserviceaccount.com"
    return {"email": email, "member": f"serviceAccount:{email}", "uniqueId": GCP_PROJECT_NUMBER + "1"}


RESOURCE_HOOKS: dict[str, ResourceHook] = {
    "aws:ec2/instance:Instance": _aws_instance,
    "random:index/randomPassword:RandomPassword": _random_secret,
    "random:index/randomString:RandomString": _random_secret,
    "random:index/randomId:RandomId": _random_id,
    "gcp:serviceaccount/account:Account": _gcp_service_account,
}


# -- data sources -------------------------------------------------------------------------------


def _listify(value: Any) -> Any:
    items = list(value or [])
    return items[0] if len(items) == 1 else items


def render_policy_document(args: Mapping[str, Any]) -> str:
    """IAM JSON from get_policy_document's statements, as the provider renders it."""
    statements = []
    for s in args.get("statements") or []:
        out: dict[str, Any] = {}
        if s.get("sid"):
            out["Sid"] = s["sid"]
        out["Effect"] = s.get("effect") or "Allow"
        for key, field in (("Action", "actions"), ("NotAction", "notActions")):
            if s.get(field):
                out[key] = _listify(s[field])
        for key, field in (("Resource", "resources"), ("NotResource", "notResources")):
            if s.get(field):
                out[key] = _listify(s[field])
        for key, field in (("Principal", "principals"), ("NotPrincipal", "notPrincipals")):
            if s.get(field):
                out[key] = {p["type"]: _listify(p.get("identifiers")) for p in s[field]}
        if s.get("conditions"):
            cond: dict[str, dict[str, Any]] = {}
            for c in s["conditions"]:
                cond.setdefault(c["test"], {})[c["variable"]] = _listify(c.get("values"))
            out["Condition"] = cond
        statements.append(out)
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, indent=2)


def _policy_document(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    text = render_policy_document(args)
    return {
        "json": text,
        "minifiedJson": json.dumps(json.loads(text), separators=(",", ":")),
        "id": digest(text),
    }


def _ssm_parameter(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = args.get("name", "")
    path = name if name.startswith("/") else f"/{name}"
    value = (
        f"ami-0{digest(name, length=16)}" if "ami" in name.lower() else f"offline-{digest(name, length=8)}"
    )
    return {
        "name": name,
        "value": value,
        "insecureValue": value,
        "type": "String",
        "version": 1,
        "arn": f"arn:aws:ssm:{ctx.aws_region}:{ACCOUNT_ID}:parameter{path}",
        "id": name,
    }


def _ami(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    ami = f"ami-0{digest(json.dumps(args, sort_keys=True, default=str), length=16)}"
    return {
        "id": ami,
        "imageId": ami,
        "name": "offline-ami",
        "architecture": "x86_64",
        "rootDeviceName": "/dev/sda1",
    }


def _caller_identity(_: Mapping[str, Any], __: MockContext) -> dict[str, Any]:
    return {
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/offline",
        "userId": "AIDAOFFLINE",
        "id": ACCOUNT_ID,
    }


def _region(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    region = args.get("region") or args.get("name") or ctx.aws_region
    return {"name": region, "region": region, "id": region, "endpoint": f"ec2.{region}.amazonaws.com"}


def _partition(_: Mapping[str, Any], __: MockContext) -> dict[str, Any]:
    return {
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "reverseDnsPrefix": "com.amazonaws",
        "id": "aws",
    }


def _subnet(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    ident = args.get("id") or f"subnet-{digest(json.dumps(args, sort_keys=True, default=str))}"
    zone = f"{ctx.aws_region}{'abc'[int(digest(ident, length=4), 16) % 3]}"
    return {"id": ident, "availabilityZone": zone, "vpcId": "vpc-0offline", "cidrBlock": "10.0.0.0/20"}


def _vpc(args: Mapping[str, Any], _: MockContext) -> dict[str, Any]:
    ident = args.get("id") or "vpc-0offline"
    return {"id": ident, "cidrBlock": "10.0.0.0/16", "arn": f"arn:aws:ec2:::vpc/{ident}"}


def _gcp_project(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    project = args.get("projectId") or ctx.gcp_project
    return {"projectId": project, "number": GCP_PROJECT_NUMBER, "name": project, "id": f"projects/{project}"}


def _gcp_image(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    project = args.get("project") or ctx.gcp_project
    name = args.get("name") or f"{args.get('family', 'image')}-v20261101"
    link = f"https://www.googleapis.com/compute/v1/projects/{project}/global/images/{name}"
    return {"name": name, "family": args.get("family"), "selfLink": link, "project": project, "id": link}


def _gcp_default_service_account(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    email = f"{GCP_PROJECT_NUMBER}-compute@developer.gserviceaccount.com"
    return {
        "email": email,
        "member": f"serviceAccount:{email}",
        "project": args.get("project") or ctx.gcp_project,
    }


INVOKE_HOOKS: dict[str, InvokeHook] = {
    "aws:iam/getPolicyDocument:getPolicyDocument": _policy_document,
    "aws:ssm/getParameter:getParameter": _ssm_parameter,
    "aws:ec2/getAmi:getAmi": _ami,
    "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
    "aws:index/getRegion:getRegion": _region,
    "aws:index/getPartition:getPartition": _partition,
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:ec2/getVpc:getVpc": _vpc,
    "gcp:organizations/getProject:getProject": _gcp_project,
    "gcp:compute/getImage:getImage": _gcp_image,
    "gcp:compute/getDefaultServiceAccount:getDefaultServiceAccount": _gcp_default_service_account,
}


def _load_extensions() -> None:
    import importlib
    import pkgutil

    package = __name__.rsplit(".", 1)[0]
    path = [str(__import__("pathlib").Path(__file__).parent)]
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name.startswith("mocks_"):
            module = importlib.import_module(f"{package}.{info.name}")
            RESOURCE_HOOKS.update(getattr(module, "RESOURCE_HOOKS", {}))
            INVOKE_HOOKS.update(getattr(module, "INVOKE_HOOKS", {}))


_load_extensions()
