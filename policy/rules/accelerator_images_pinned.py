"""accelerator-images-pinned: what an accelerator node runs at boot is pinned, not trusted by name.

A tag can be moved to other bytes at any time; a digest cannot. The check reads
the boot configuration it can see: EC2 instances' and launch templates' user
data (plain, base64, or gzip-compressed as this library renders it) and GCE
instances', templates' and TPU nodes' startup scripts and user data. It reports
every container image a `docker`/`podman`/`nerdctl` `run`, `create` or `pull`
names without an `@sha256:` digest, and every download piped straight into a
shell (`curl ... | bash`), which runs whatever the server sends. Advisory: user
data can also fetch its real work from elsewhere, where no preview can see it.

Kubernetes workloads whose pods use accelerators (policy/rules/_k8s.py: Pods, Deployments,
StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, LeaderWorkerSets and third-party kinds that
embed pod templates) are judged the same way: every container's `image`, init and ephemeral
containers included, names its digest (`@sha256:` and 64 hex digits, nothing else). So is a Helm
release whose values request accelerators or select accelerator nodes, where its values name images
the common way (`image: repo@sha256:...`, or `repository` with `tag@sha256:...`, `digest` or `sha`).
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.images import SHA256_HEX, is_pinned
from inference_infra.components.resources.boot import boot_texts as _boot_texts
from inference_infra.components.resources.boot import cloud_config, decoded
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
)
from inference_infra.policy.rules._k8s import (
    WORKLOAD_NOUNS,
    accelerator_templates,
    helm_not_judged,
    helm_values,
    is_workload,
    mappings,
    where,
)
from inference_infra.policy.rules._machines import accelerator_machine, untyped_template

NAME = "accelerator-images-pinned"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.ADVISORY
DESCRIPTION = (
    "Accelerator boot scripts and Kubernetes accelerator pods run container images pinned by digest; "
    "boot scripts pipe no download into a shell."
)
CONFIG_SCHEMA = PolicyConfigSchema(properties={})

_CONTAINER_TOOLS = frozenset({"docker", "podman", "nerdctl"})
_IMAGE_VERBS = frozenset({"run", "create", "pull"})
_QUOTING = str.maketrans("", "", "\"'\\")
# Options of `docker run` that take a value as the next word (the image is the first other word).
_VALUE_OPTIONS = frozenset(
    [
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "--mount",
        "--name",
        "--network",
        "--net",
        "--gpus",
        "--device",
        "-p",
        "--publish",
        "--restart",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--entrypoint",
        "--ipc",
        "--pid",
        "--shm-size",
        "--cap-add",
        "--cap-drop",
        "--label",
        "-l",
        "--log-driver",
        "--log-opt",
        "--ulimit",
        "--memory",
        "-m",
        "--cpus",
        "--security-opt",
        "--runtime",
        "--platform",
        "--hostname",
        "-h",
        "--add-host",
        "--tmpfs",
        "--group-add",
        "--health-cmd",
        "--stop-signal",
    ]
)
_PIPED_DOWNLOAD = re.compile(r"\b(curl|wget)\b[^|\n;]*\|\s*(sudo\s+(-\S+\s+)*)?(ba|z|da|k)?sh\b")


def boot_texts(resource: Resource) -> Iterator[tuple[str, Any]]:
    """(property path, text or UNKNOWN) of every boot script or user data the resource carries."""
    return _boot_texts(resource.props)


def _commands(script: str) -> Iterator[list[str]]:
    """Shell words of every command line that names a container tool, and of every cloud-config runcmd
    entry."""
    if script.startswith("#cloud-config"):
        document = cloud_config(script) or {}
        for entry in document.get("runcmd") or [] if isinstance(document, Mapping) else []:
            if isinstance(entry, list):
                yield [str(word) for word in entry]
            elif isinstance(entry, str):
                yield from _commands(entry)
        for item in document.get("write_files") or [] if isinstance(document, Mapping) else []:
            if isinstance(item, Mapping) and isinstance(item.get("content"), str):
                yield from _commands(item["content"])
        return
    for line in script.replace("\\\n", " ").splitlines():
        # Only a line naming a container tool can run an image: the others skip shlex (4 s of the
        # prod plan). Quotes and backslashes go first, as shlex would join `d"ock"er` into docker.
        bare = line.translate(_QUOTING)
        if not any(tool in bare for tool in _CONTAINER_TOOLS):
            continue
        try:
            yield shlex.split(line, comments=True)
        except ValueError:
            yield line.split()


@functools.lru_cache(maxsize=256)
def _unpinned(script: str) -> tuple[str, ...]:
    return tuple(unpinned_images(script))


def unpinned_images(script: str) -> list[str]:
    found = []
    for words in _commands(script):
        for i, word in enumerate(words[:-1]):
            if word.rsplit("/", 1)[-1] in _CONTAINER_TOOLS and words[i + 1] in _IMAGE_VERBS:
                image = _image(words[i + 2 :])
                if image and not is_pinned(image) and not image.startswith("$"):
                    found.append(image)
                break
    return found


def _image(arguments: list[str]) -> str | None:
    skip = False
    for word in arguments:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUE_OPTIONS
        else:
            return word
    return None


def piped_downloads(script: str) -> list[str]:
    return [m.group(0).strip() for m in _PIPED_DOWNLOAD.finditer(script)]


APPLIES_TO = f"accelerator instances, templates and TPU nodes, and {WORKLOAD_NOUNS}"


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    values = helm_values(resource)
    if values is not None:
        return _check_helm(resource, values)
    if is_workload(resource):
        return _check_pods(resource)
    if accelerator_machine(resource) is None and not untyped_template(resource):
        return not_applicable(f"applies to {APPLIES_TO}")
    found = Findings()
    texts = list(boot_texts(resource))
    if not texts:
        return not_applicable("sets no user data or startup script")
    for path, value in texts:
        if value is UNKNOWN:
            found.not_known(path)
            continue
        if not isinstance(value, str):
            continue
        script = decoded(value)
        for image in _unpinned(script):  # kept per script: instances share their template's
            found.violation(
                f"{resource.label} runs the container image {image!r} from its {path} by tag; pin it by "
                "digest (image@sha256:...) so the node runs the bytes that were reviewed."
            )
        for command in piped_downloads(script):
            found.violation(
                f"{resource.label} pipes a download into a shell in its {path} ({command!r}); download to "
                "a file, check its SHA-256 against a value pinned in code, then run it."
            )
    return found.outcome()


_DIGEST_HEX = re.compile(rf"^(sha256:)?{SHA256_HEX}\Z")


def helm_image(block: Mapping[str, Any]) -> tuple[str, bool] | None:
    """(reference, pinned) of an image a chart's values name the common way: `image: "repo@sha256:..."`,
    or a mapping with `repository` (and `registry`, `tag`, and `digest` or `sha`); None otherwise."""
    repository = block.get("repository")
    if not isinstance(repository, str):
        return None
    registry, tag = block.get("registry"), block.get("tag")
    name = f"{registry}/{repository}" if isinstance(registry, str) and registry else repository
    reference = f"{name}:{tag}" if isinstance(tag, (str, int, float)) and str(tag) else name
    digests = [block.get(k) for k in ("digest", "sha")]
    pinned = is_pinned(reference) or any(isinstance(d, str) and _DIGEST_HEX.match(d) for d in digests)
    return reference, pinned


def _check_helm(resource: Resource, values: Any) -> Outcome:
    """A Helm release whose values place pods on accelerators: every image its values name."""
    if (not_judged := helm_not_judged(values)) is not None:
        return not_judged
    found = Findings()
    for path, block in mappings(values):
        image = block.get("image")
        named = (image, is_pinned(image)) if isinstance(image, str) else helm_image(block)
        if named is not None and not named[1]:
            where_at = f"{path}.image" if isinstance(image, str) else path
            found.violation(
                f"{resource.label} runs the container image {named[0]!r} ({where_at}) without a digest in "
                "values that place pods on accelerators; pin it (a digest or sha value, or tag@sha256:...)."
            )
    return found.outcome()


def _check_pods(resource: Resource) -> Outcome:
    templates = accelerator_templates(resource)
    if not templates:
        return not_applicable("its pods use no accelerator")
    found = Findings()
    for template in templates:
        for path, container in template.containers():
            image = container.get("image")
            if image is UNKNOWN:
                found.not_known(f"{path}.image")
            elif isinstance(image, str) and not is_pinned(image):
                name = container.get("name") if isinstance(container.get("name"), str) else path
                found.violation(
                    f"{where(resource, template)} runs the container image {image!r} in container {name!r} "
                    f"({path}.image) without a valid digest; pin it (image@sha256:<64 hex digits>) so the "
                    "nodes run the bytes that were reviewed."
                )
    return found.outcome()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
