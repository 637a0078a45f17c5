"""Validate a rendered Kubernetes object against the API's own schemas: `validate(obj)` -> errors.

`objects_of(capture)` gives the Kubernetes objects of a plan capture as manifests (Helm releases left
out: Helm renders theirs on the cluster).

- Built-in kinds (Deployment, Service, NetworkPolicy, ...): kubernetes-validate in strict mode (an
  unknown field is an error), against the Kubernetes version `KUBERNETES_VERSION`.
- CRD kinds (KEDA, Karpenter, LeaderWorkerSet, Gateway API, Prometheus Operator, Secrets Store CSI,
  External Secrets): jsonschema against the `openAPIV3Schema` of the served version in the CRDs
  vendored, pinned, in tests/k8s_schemas/ (see its SOURCES). As `kubectl apply --validate=strict`
  does, a field the schema does not declare is an error unless the CRD preserves unknown fields
  there (`x-kubernetes-preserve-unknown-fields`); `nullable` admits null; `metadata` is checked
  against the API's ObjectMeta (strict). Not evaluated: the CRDs' CEL rules
  (`x-kubernetes-validations`) and admission webhooks, which only a cluster runs.

An object kubernetes-validate has no schema for and no vendored CRD declares is an error too: a
typo in apiVersion or kind must not pass unvalidated.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import referencing
import yaml

SCHEMAS = Path(__file__).resolve().parents[2] / "k8s_schemas"
KUBERNETES_VERSION = "1.37.0"  # the newest kubernetes-validate ships; the oldest we support is 1.30
_DEFINITIONS_ID = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = f"{_DEFINITIONS_ID}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@functools.cache
def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the strict JSON schema of every served version of every vendored CRD."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(SCHEMAS.glob("*.yaml")):
        for crd in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not isinstance(crd, Mapping) or crd.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                if not version.get("served"):
                    continue
                schema = strict(version["schema"]["openAPIV3Schema"])
                schema.setdefault("properties", {})["metadata"] = {"$ref": _OBJECT_META}
                found[(f"{group}/{version['name']}", kind)] = schema
    return found


def strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A structural CRD schema as JSON Schema that refuses undeclared fields and admits nulls where
    `nullable` says so (a copy; the input is left alone)."""
    out = copy.deepcopy(dict(schema))
    _tighten(out)
    return out


def _tighten(node: Any) -> None:
    if isinstance(node, list):
        for child in node:
            _tighten(child)
        return
    if not isinstance(node, dict):
        return
    if node.get("nullable") is True and isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    declares = "properties" in node and "additionalProperties" not in node
    if declares and not node.get("x-kubernetes-preserve-unknown-fields"):
        node["additionalProperties"] = False
    # The structural part only: a branch of allOf/anyOf/oneOf/not only constrains values the structural
    # schema declares (Kubernetes' rule for CRDs), so it must not refuse fields its siblings declare.
    for key, child in node.items():
        if key in ("properties", "patternProperties"):
            for sub in child.values():
                _tighten(sub)
        elif key in ("items", "additionalProperties"):
            _tighten(child)


@functools.cache
def _registry() -> referencing.Registry:
    folder = (
        resources.files(kubernetes_validate)
        / "kubernetes-json-schema"
        / f"v{KUBERNETES_VERSION}-local-strict"
    )
    definitions = json.loads((folder / "_definitions.json").read_text())
    return referencing.Registry().with_resource(
        _DEFINITIONS_ID, referencing.Resource.from_contents(definitions)
    )


def _where(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(root)"


UNKNOWN_PLACEHOLDER = "unknown-at-preview"


def objects_of(capture: Any) -> list[dict[str, Any]]:
    """The Kubernetes objects of a capture (`plan_of()`, `Harness.capture()`) as manifests: every
    `kubernetes:*` custom resource but Helm releases and charts (Helm renders theirs on the cluster),
    a value not known until deploy time as a placeholder string."""
    from inference_infra.components.offline_plan.model import Unknown

    def known(value: Any) -> Any:
        if isinstance(value, Unknown):
            return UNKNOWN_PLACEHOLDER
        if isinstance(value, dict):
            return {k: known(v) for k, v in value.items()}
        if isinstance(value, list):
            return [known(v) for v in value]
        return value

    return [
        known(r.props)
        for r in capture.custom
        if r.type.startswith("kubernetes:") and not r.type.startswith("kubernetes:helm.sh/")
    ]


def validate(obj: Mapping[str, Any], version: str = KUBERNETES_VERSION) -> list[str]:
    """Every schema error of one object, as 'Kind name: path: message'; [] when it is valid."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    label = f"{kind} {metadata.get('name', '?')}"
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return [f"{label}: apiVersion and kind must be strings (got {api_version!r}, {kind!r})"]
    schema = crd_schemas().get((api_version, kind))
    if schema is not None:
        validator = jsonschema.Draft202012Validator(schema, registry=_registry())
        errors = sorted(validator.iter_errors(dict(obj)), key=lambda e: list(map(str, e.absolute_path)))
        return [f"{label}: {_where(e)}: {e.message}" for e in errors]
    try:
        kubernetes_validate.validate(dict(obj), version, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        known = sorted({k for _, k in crd_schemas()})
        return [
            f"{label}: no schema for apiVersion {api_version!r} kind {kind!r} in Kubernetes {version} "
            f"nor in the vendored CRDs ({', '.join(known)})"
        ]
    except kubernetes_validate.ValidationError as e:
        return [f"{label}: {_where(e)}: {e.message}"]
    return []
