"""no-plaintext-secrets: no token, key or password sits in plain text where machines and readers see it.

User data is readable by anyone who may describe the instance and by every process on it; an SSM
`String` parameter, a container's environment and Helm values are stored and shown in clear. A
Hugging Face token there is a token anyone with read access may use. This policy reads:

- user data and startup scripts: EC2 instances, spot requests, launch templates and launch
  configurations (`userData`, `userDataBase64`; base64, gzip, MIME parts and cloud-config
  `write_files` opened), GCE instances, templates and TPU VMs (`metadataStartupScript`, and every
  `metadata` key);
- SSM parameters of type `String` or `StringList` (`value`, `insecureValue`; the parameter's name
  names the value);
- container environment: Kubernetes workloads (every pod spec's containers' `env`), ConfigMap
  data, ECS task definitions and Batch job definitions (`environment`), Lambda functions
  (`environment.variables`), SageMaker models, Cloud Run services and jobs (`envs`);
- Helm values (`kubernetes:helm.sh` Releases and Charts).

What counts is in `inference_infra.components.resources.secrets`: tokens of known shapes (`hf_`,
`sk-`, AWS access key ids, private key blocks) anywhere, and values of 20 characters or more with
at least 4 bits of entropy per character under names matching `token|secret|password|api[_-]?key`
(SHA-256 digests, ARNs, paths and references exempt). A value wrapped as a Pulumi secret is still
plain text on the machine or in the parameter, so it counts too. Messages name the resource and
where the value sits, never the value. Keep secrets in Secrets Manager, SSM SecureString, Secret
Manager or a Kubernetes Secret and fetch them at run time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import get_path
from inference_infra.components.resources.boot import boot_texts
from inference_infra.components.resources.iam import document
from inference_infra.components.resources.secrets import (
    Finding,
    env_findings,
    scan_boot,
    scan_tree,
    scan_value,
)
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
)

NAME = "no-plaintext-secrets"
SEVERITY = Severity.CRITICAL
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "No token, key or password in plain text in user data, startup scripts, SSM String parameters, container "
    "environment or Helm values."
)
CONFIG_SCHEMA = PolicyConfigSchema(properties={})

BOOTED = frozenset(
    {
        "aws:ec2/instance:Instance",
        "aws:ec2/spotInstanceRequest:SpotInstanceRequest",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:ec2/launchConfiguration:LaunchConfiguration",
        "gcp:compute/instance:Instance",
        "gcp:compute/instanceTemplate:InstanceTemplate",
        "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
        "gcp:tpu/v2Vm:V2Vm",
    }
)
SSM_PARAMETER = "aws:ssm/parameter:Parameter"
ECS_TASK_DEFINITION = "aws:ecs/taskDefinition:TaskDefinition"
BATCH_JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
LAMBDA_FUNCTION = "aws:lambda/function:Function"
SAGEMAKER_MODEL = "aws:sagemaker/model:Model"
CLOUD_RUN = frozenset(
    {"gcp:cloudrunv2/service:Service", "gcp:cloudrunv2/job:Job", "gcp:cloudrun/service:Service"}
)
HELM = frozenset(
    {"kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart"}
)
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
APPLIES_TO = (
    "user data and startup scripts, SSM String parameters, container environment (Kubernetes, ECS, Batch, "
    "Lambda, SageMaker, Cloud Run), ConfigMaps and Helm values"
)
_FIX = (
    "keep it in a secret store (Secrets Manager, SSM SecureString, Secret Manager, a Kubernetes Secret) and "
    "read it at run time."
)


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    found = Findings()
    kind = resource.type
    if kind in BOOTED:
        sources = _boot(resource, found)
    elif kind == SSM_PARAMETER:
        sources = _parameter(resource, found)
    elif kind in (ECS_TASK_DEFINITION, BATCH_JOB_DEFINITION):
        sources = _container_json(resource, found)
    elif kind == LAMBDA_FUNCTION:
        where = "environment.variables"
        variables = get_path(resource.props, "environment", "variables")
        sources = _known(variables, where, found, lambda v: env_findings(v, where))
    elif kind == SAGEMAKER_MODEL:
        sources = _sagemaker(resource, found)
    elif kind == CONFIG_MAP:
        sources = _known(resource.props.get("data"), "data", found, lambda v: scan_tree(v, "data"))
    elif kind in CLOUD_RUN or (kind.startswith("kubernetes:") and kind not in HELM):
        sources = _containers(resource, found)
    elif kind in HELM:
        sources = _known(resource.props.get("values"), "values", found, lambda v: scan_tree(v, "values"))
    else:
        return not_applicable(f"applies to {APPLIES_TO}")
    for finding in _unique(sources):
        found.violation(f"{resource.label} has {finding.kind} in plain text at {finding.where}; {_FIX}")
    return found.outcome()


def _known(value: Any, where: str, found: Findings, scan: Any) -> list[Finding]:
    if value is UNKNOWN:
        found.not_known(where)
        return []
    return scan(value) if value is not None else []


def _boot(resource: Resource, found: Findings) -> list[Finding]:
    findings: list[Finding] = []
    for path, value in boot_texts(resource.props):
        if value is UNKNOWN:
            found.not_known(path)
        elif isinstance(value, str):
            findings += scan_boot(value, path)  # shared with the plan's secret marking (one pass)
    metadata = resource.props.get("metadata")
    if isinstance(metadata, Mapping):  # other metadata keys: every process on the VM reads them
        others = {k: v for k, v in metadata.items() if k not in ("startup-script", "user-data")}
        findings += scan_tree(others, "metadata")
    return findings


def _parameter(resource: Resource, found: Findings) -> list[Finding]:
    props = resource.props
    kind = props.get("type")
    if kind is UNKNOWN:
        found.not_known("type")
        return []
    if kind not in ("String", "StringList"):
        return []  # SecureString: encrypted with KMS
    name = props.get("name") if isinstance(props.get("name"), str) else resource.name
    findings: list[Finding] = []
    for key in ("value", "insecureValue"):
        value = props.get(key)
        if value is UNKNOWN:
            found.not_known(key)
        else:
            findings += scan_value(name.rsplit("/", 1)[-1], value, key)
    return findings


def _container_json(resource: Resource, found: Findings) -> list[Finding]:
    """ECS containerDefinitions (a JSON list) or a Batch job's containerProperties (a JSON object)."""
    key = "containerDefinitions" if resource.type == ECS_TASK_DEFINITION else "containerProperties"
    value = resource.props.get(key)
    if value is UNKNOWN:
        found.not_known(key)
        return []
    parsed = _json(value)
    containers = parsed if isinstance(parsed, list) else [parsed] if isinstance(parsed, Mapping) else []
    findings: list[Finding] = []
    for i, container in enumerate(containers):
        if isinstance(container, Mapping):
            where = f"{key}[{i}]" if isinstance(parsed, list) else key
            findings += env_findings(container.get("environment"), f"{where}.environment")
    return findings


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value if document(value) is not None or isinstance(value, list) else None


def _sagemaker(resource: Resource, found: Findings) -> list[Finding]:
    props = resource.props
    findings = env_findings(
        get_path(props, "primaryContainer", "environment"), "primaryContainer.environment"
    )
    for i, container in enumerate(props.get("containers") or []):
        findings += env_findings(get_path(container, "environment"), f"containers[{i}].environment")
    return findings


def _containers(resource: Resource, found: Findings) -> list[Finding]:
    """Every container (a mapping in a `containers` or `initContainers` list) and its env / envs."""
    findings: list[Finding] = []
    for where, container in _walk_containers(resource.props, ""):
        for key in ("env", "envs"):
            entries = container.get(key)
            if entries is UNKNOWN:
                found.not_known(f"{where}.{key}")
            else:
                findings += env_findings(entries, f"{where}.{key}")
    return findings


def _walk_containers(value: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(value, Mapping):
        for key, child in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in ("containers", "initContainers") and isinstance(child, list):
                for i, container in enumerate(child):
                    if isinstance(container, Mapping):
                        yield f"{where}[{i}]", container
            else:
                yield from _walk_containers(child, where)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _walk_containers(child, f"{path}[{i}]")


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


POLICY = resource_policy(**rule_metadata(__name__), check=check)
