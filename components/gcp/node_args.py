"""The inputs a GCP GPU fleet and a TPU VM share, and where their weights come from (pure: no provider SDK).

`GcpNodeArgs` is the base of `GpuFleetArgs` and `TpuVmArgs`, on the cross-cloud `FleetCommonArgs`
(capacity counts, `model`, `serving_port`, `tags`, `kms_key`, `auto_shutdown`). Apart from
`fleet_common.py` (the checks and serving plan they share) so that the stack config reads them
without loading the provider SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import Renamed, arg, deprecated, renamed_inputs
from inference_infra.components.fleet import FleetCommonArgs
from inference_infra.components.serving import EngineConfig


@dataclass(frozen=True)
class GcsWeights:
    """Where a GCP node's weights come from: folders in one Cloud Storage bucket, the first one served."""

    bucket: str = arg(
        doc="The Cloud Storage bucket holding the weights (a name, without gs://): the nodes' service "
        "account may read only the listed model folders in it (roles/storage.objectViewer with a prefix "
        "condition; the bucket needs uniform bucket-level access), or the whole bucket when none is listed."
    )
    uris: Sequence[str] = arg(
        (),
        "gs://<bucket>/<folder> model folders the nodes copy at every boot (to local SSD, else the Filestore "
        "cache, else the boot disk) and verify against their pinned manifest; the engines serve the first. "
        "Folder paths: letters, digits, '.', '_', '-' and '/'.",
    )
    manifest_sha256: str | Mapping[str, str] = arg(
        factory=dict,
        doc="Each folder's pinned manifest: folder URI (as in uris) -> the SHA-256 of its "
        "inference-manifest.json, which `inference-infra models manifest gs://...` prints. Required for "
        "every folder: a node downloads only the files that manifest lists and serves nothing when the "
        "manifest in the bucket has another digest. In a program, one folder is pinned with the digest "
        "alone (a string, as S3Weights.manifest_sha256 takes it), the preferred shape there; the map "
        "stays for several folders and is what stack files use.",
    )

    def pins(self) -> dict[str, str]:
        """Folder URI -> pinned digest, whichever shape manifest_sha256 was given in. A string pins the
        one folder of uris (with none or several, it pins nothing: `pin_problems` says why)."""
        pinned = self.manifest_sha256
        if isinstance(pinned, str):
            return {self.uris[0]: pinned} if len(self.uris) == 1 and isinstance(self.uris[0], str) else {}
        return dict(pinned)

    def pinned(self, uri: str) -> str | None:
        """The pinned manifest digest of a folder (lower-case), or None."""
        wanted = uri.rstrip("/")
        for key, value in self.pins().items():
            if isinstance(key, str) and key.rstrip("/") == wanted and isinstance(value, str):
                return value.lower()
        return None


def _weights(bucket: str | None, uris: Sequence[str] | None) -> GcsWeights | None:
    # The previous release's inputs had no pins: the fleet's checks then ask for manifest_sha256.
    if bucket is None and not uris:
        return None
    return GcsWeights(bucket or "", tuple(uris or ()))


def _weights_from_bucket(value: Any, kwargs: Any) -> dict[str, Any]:
    """The old `model_bucket` (with `model_uris`, when given too) became `weights=GcsWeights(...)`."""
    return {"weights": _weights(value, kwargs.pop("model_uris", None))}


def _weights_from_uris(value: Any, kwargs: Any) -> dict[str, Any]:
    return {"weights": _weights(kwargs.pop("model_bucket", None), value)}


@renamed_inputs(
    Renamed("model_bucket", "weights", _weights_from_bucket),
    Renamed("model_uris", "weights", _weights_from_uris),
    Renamed("client_ranges", "client_cidr_blocks"),
    Renamed("monitoring_ranges", "monitoring_cidr_blocks"),
    Renamed("labels", "tags"),
)
@dataclass(frozen=True, kw_only=True)
class GcpNodeArgs(FleetCommonArgs):
    """The inputs a GCP GPU fleet and a TPU VM share (see GpuFleetArgs, TpuVmArgs)."""

    subnetwork: pulumi.Input[str] = arg(
        doc="The subnetwork the nodes take their private addresses from (PrivateNetwork.subnetwork.id).",
        stack=False,
    )
    network: pulumi.Input[str] | None = arg(
        None,
        "The subnetwork's VPC (PrivateNetwork.network.id): the firewall rules for client_cidr_blocks and "
        "monitoring_cidr_blocks are made in it.",
        stack=False,
    )
    zone: str | None = arg(
        None,
        "The zone the nodes run in, e.g. us-central1-a. Default: the gcp:zone config, else the first zone "
        "of gcp:region (<gcp:region>-a where it exists; us-east1-b).",
    )
    project: str | None = arg(None, "The project. Default: the gcp:project config.", stack=False)
    weights: GcsWeights | None = arg(
        None,
        "The model folders in Cloud Storage the nodes copy at boot, and the one bucket they may read; with "
        "model, the engines serve the first folder.",
    )
    model_cache_nfs: pulumi.Input[str] | None = arg(
        None,
        "FilestoreModelCache.nfs_target: mount the shared weights cache (read-only) and serve from it "
        "when the machine has no local SSD.",
        stack=False,
    )
    secure_boot: bool = arg(
        True,
        "Shielded VM Secure Boot: only signed kernel modules load (the image's NVIDIA driver must be "
        "signed). False is a stated trade (vTPM and integrity monitoring stay on GPU VMs).",
    )
    client_cidr_blocks: Sequence[str] = arg(
        (),
        "Refused when set: only the load balancer reaches the engines' API ports (a GcpInferenceEndpoint "
        "admits its own proxies and health checks). Kept for one release so old stacks get that explanation.",
    )
    monitoring_cidr_blocks: Sequence[str] = arg(
        (),
        "Private CIDRs of the monitoring cluster (its pods or nodes) that may scrape the node: the engines' "
        "metrics-only ports (each engine's port + 1000: GET /metrics, nothing of the API), and on GPU VMs "
        "dcgm-exporter (9400) and node exporter (9100); nothing else is opened. Needs network.",
    )
    image_mirrors: Mapping[str, str] = arg(
        factory=dict,
        doc="Upstream registry host -> Artifact Registry Docker repository "
        "('LOCATION-docker.pkg.dev/PROJECT/REPOSITORY'): the node pulls every image it runs from there, "
        "by the same digest. Needed without internet egress.",
        stack=False,
    )
    internet_egress: bool = arg(
        True,
        "False when the nodes' network has no route to the internet (PrivateNetwork egress "
        "'endpoints-only': Google APIs only). The boot then downloads nothing, and the component refuses "
        "itself unless every image it runs has a mirror and every package its boot needs is preinstalled.",
        stack=False,
    )
    package_downloads: bool | None = arg(
        None,
        "Install a package the image lacks (Ops Agent, nfs-common, mdadm) at boot. Default: only with "
        "internet egress; without it a missing package is one boot-log line naming it.",
        stack=False,
    )
    preinstalled_packages: Sequence[str] = arg(
        (),
        "Packages the image carries (any of google-cloud-ops-agent, nfs-common, mdadm), which a node "
        "without internet egress then needs not download.",
        stack=False,
    )
    api_key_secret: str | None = arg(
        None,
        "Secret Manager secret holding the engines' API key (clients send it as a Bearer token): NAME (in "
        "the nodes' project) or projects/PROJECT/secrets/NAME, optionally /versions/N (default: latest). "
        "Each engine fetches it at start into a 0400 file of its own runtime folder, never into metadata or "
        "a unit; the nodes' service account may read only this secret. Default: the secret "
        "inference-infra-<name>-api-key, which must exist before the engines start.",
    )
    engines: EngineConfig | None = arg(
        None,
        "Deprecated since 0.2.0: give model and the component plans its engines. Engines planned "
        "elsewhere (components.serving.plan_engines), serving the first weights folder.",
        stack=False,
    )

    def __post_init__(self) -> None:
        if self.engines is not None:
            deprecated(
                f"{type(self).__name__}(engines=...) is deprecated since 0.2.0 and goes in the next release; "
                "use model=ServedModel(...): the component plans its engines",
                stacklevel=5,
            )

    @property
    def weight_uris(self) -> tuple[str, ...]:
        """The weights folders the nodes copy (the first is served); () without weights."""
        return tuple(self.weights.uris) if self.weights is not None else ()

    @property
    def weight_bucket(self) -> str | None:
        """The one bucket the nodes may read; None without weights."""
        return self.weights.bucket if self.weights is not None and self.weights.bucket else None

    @property
    def model_uris(self) -> tuple[str, ...]:
        deprecated(f"{type(self).__name__}.model_uris is deprecated; use weights.uris")
        return self.weight_uris

    @property
    def model_bucket(self) -> str | None:
        deprecated(f"{type(self).__name__}.model_bucket is deprecated; use weights.bucket")
        return self.weight_bucket

    @property
    def downloads(self) -> bool:
        """Whether the boot installs a package the image lacks."""
        return self.internet_egress if self.package_downloads is None else self.package_downloads
