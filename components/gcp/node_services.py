"""What a GCP node's rendered boot reaches, derived from the startup script itself, and whether its network
answers.

`boot_hosts(script)` reads the bash script a fleet renders (components/gcp/startup.py), decodes every file
it writes from a base64 blob (units, node scripts, configuration), and returns each host the node
connects to, with why: the URLs in the script and in the node scripts (gcs_weights.py: Cloud Storage's
JSON API; gcp_secret.py: Secret Manager), every image a unit or a `docker run` pulls (its registry host),
the Ops Agent's outputs (Cloud Logging and Cloud Monitoring), and with package downloads on, the apt
repositories `apt-get` reads (the image's Ubuntu mirrors; NVIDIA's repository for DCGM). Derived from the
script rather than listed by hand: a new call in a node script or a new image is seen here, or the test
over every rendered boot fails (tests/components/gcp/test_node_services.py).

`unreachable(hosts, network)`: the hosts a network does not answer. Google's documentation of Private
Google Access (https://cloud.google.com/vpc/docs/private-google-access and "Domain options" in
https://cloud.google.com/vpc/docs/configure-private-google-access, read 2026-12-02): a VM without an
external IP on a subnet with Private Google Access reaches Google APIs and services, the domains
`*.googleapis.com`, `*.gcr.io` and `*.pkg.dev` (Artifact Registry) among them; it does not reach the
internet (apt mirrors, NVIDIA's repository, PyPI, Docker Hub, nvcr.io, public.ecr.aws) without Cloud
NAT. With `egress: endpoints-only` the network (components/gcp/network.py) has no NAT, allows only HTTPS
to the Google API range, and its private DNS zones resolve `*.googleapis.com` and `*.pkg.dev` only, so
`gcr.io` is out of reach there too. The metadata server (metadata.google.internal, 169.254.169.254)
answers every VM and is no network call.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.components.images import SHA256_HEX

# (host, why) of what the Ops Agent sends (its default logging and metrics pipelines).
OPS_AGENT_HOSTS = (
    ("logging.googleapis.com", "the Ops Agent's logs (Cloud Logging)"),
    ("monitoring.googleapis.com", "the Ops Agent's metrics (Cloud Monitoring), the autoscaler's load"),
)
# Where `apt-get` goes on the images (Google's Ubuntu images use Canonical's mirrors in GCE:
# <region>.gce.archive.ubuntu.com and security.ubuntu.com; NVIDIA's images add its CUDA repository).
UBUNTU_MIRRORS = ("archive.ubuntu.com", "the image's Ubuntu apt mirrors (<region>.gce.archive.ubuntu.com)")
NVIDIA_REPOSITORY = (
    "developer.download.nvidia.com",
    "DCGM (datacenter-gpu-manager) from NVIDIA's apt repository",
)
# What the startup script downloads from a URL it names (startup.py).
KNOWN_DOWNLOADS = {"packages.cloud.google.com": "the Ops Agent's apt repository and signing keys"}
# Hosts every VM reaches without a network route (the metadata server), and loopback.
_LOCAL = frozenset({"metadata.google.internal", "169.254.169.254", "localhost", "127.0.0.1"})
# Domains Private Google Access answers; with endpoints-only, those the network's private DNS zones cover.
PGA_DOMAINS = ("googleapis.com", "gcr.io", "pkg.dev")
ENDPOINTS_ONLY_DOMAINS = ("googleapis.com", "pkg.dev")

_WRITE_FILE = re.compile(r"^[ \t]*write_file [0-7]{4} (\S+) '([A-Za-z0-9+/=]*)'$", re.MULTILINE)
_URL = re.compile(r"https?://([a-z0-9][a-z0-9.-]*[a-z0-9])(?::\d+)?(?=[/\s'\")]|$)", re.IGNORECASE)
_IMAGE = re.compile(
    r"(?<![\w./-])([a-z0-9.-]+\.[a-z]{2,}(?::\d+)?)/[\w./-]+(?::[\w.-]+)?@sha256:" + SHA256_HEX
)


@dataclass(frozen=True)
class NodeNetwork:
    """What the node's network answers: Private Google Access on its subnet, Cloud NAT, endpoints-only."""

    private_google_access: bool = True  # PrivateNetwork's subnet always has it
    nat: bool = True
    endpoints_only: bool = False
    # egress named-hosts (components/gcp/network.py): Cloud NAT reaches only these host names (the Cloud
    # NGFW rule's dest_fqdns); None: NAT reaches the internet
    named_hosts: frozenset[str] | None = None

    @staticmethod
    def of_fleet(internet_egress: bool) -> NodeNetwork:
        """A fleet's network as its `internet_egress` input says (False: PrivateNetwork endpoints-only)."""
        return NodeNetwork(nat=internet_egress, endpoints_only=not internet_egress)

    def describe(self) -> str:
        if self.named_hosts is not None and self.nat and not self.endpoints_only:
            return (
                "egress named-hosts (Private Google Access; Cloud NAT to "
                + ", ".join(sorted(self.named_hosts))
                + " only)"
            )
        if self.endpoints_only:
            return "egress endpoints-only (no Cloud NAT; HTTPS to *.googleapis.com and *.pkg.dev only)"
        if self.nat:
            return "Cloud NAT (HTTPS and HTTP to the internet)"
        if self.private_google_access:
            return "no Cloud NAT, Private Google Access (*.googleapis.com, *.gcr.io, *.pkg.dev)"
        return "no Cloud NAT and no Private Google Access"

    def reaches(self, host: str) -> bool:
        if (
            self.nat
            and not self.endpoints_only
            and (self.named_hosts is None or _named(host, self.named_hosts))
        ):
            return True
        if not self.private_google_access:
            return False
        domains = ENDPOINTS_ONLY_DOMAINS if self.endpoints_only else PGA_DOMAINS
        return any(host == d or host.endswith("." + d) for d in domains)


# boot_hosts names the image's Ubuntu mirror generically (the script does not carry the image's sources
# list); on GCE it is the region's `<region>.gce.archive.ubuntu.com`, which a named-hosts list names.
_GENERIC_HOSTS = {"archive.ubuntu.com": ".gce.archive.ubuntu.com"}


def _named(host: str, named: frozenset[str]) -> bool:
    """Whether a named-hosts list covers `host` (exactly; the generic Ubuntu mirror by its GCE name)."""
    if host in named:
        return True
    suffix = _GENERIC_HOSTS.get(host)
    return suffix is not None and any(n.endswith(suffix) for n in named)


def written_files(script: str) -> dict[str, str]:
    """{path: text} of every file the script writes from a base64 blob (startup.write_file_line)."""
    files = {}
    for quoted, blob in _WRITE_FILE.findall(script):
        try:
            path = shlex.split(quoted)[0]
            files[path] = base64.b64decode(blob, validate=True).decode()
        except (ValueError, binascii.Error, UnicodeDecodeError, IndexError):
            continue
    return files


def _script_body(script: str) -> str:
    """The script without its blobs (they are read decoded) and without comment lines."""
    body = _WRITE_FILE.sub("", script)
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))


def _code(text: str) -> str:
    """A file's text without comment lines (a URL in a comment is no call)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def boot_hosts(script: str) -> dict[str, list[str]]:
    """{host: [why, ...]} for a rendered startup script (module doc)."""
    hosts: dict[str, list[str]] = {}

    def add(host: str, why: str) -> None:
        host = host.lower()
        if host in _LOCAL:
            return
        reasons = hosts.setdefault(host, [])
        if why not in reasons:
            reasons.append(why)

    body = _script_body(script)
    files = written_files(script)
    for host in _URL.findall(body):
        add(host, KNOWN_DOWNLOADS.get(host.lower(), "a download in the startup script"))
    for path, text in files.items():
        for host in _URL.findall(_code(text)):
            add(host, f"{path.rsplit('/', 1)[-1]} calls it")
    for text in [body, *files.values()]:
        for found in _IMAGE.finditer(text):
            add(found.group(1), f"image pull {found.group(0).split('@', 1)[0]}")
    downloads = re.search(r"^PACKAGE_DOWNLOADS=true$", body, re.MULTILINE) is not None
    if re.search(r"^\s*setup_ops_agent\b", body, re.MULTILINE):
        for host, why in OPS_AGENT_HOSTS:
            add(host, why)
        if downloads and "apt-get install" in body:
            add(*UBUNTU_MIRRORS)
    if downloads and re.search(r"^\s*(setup_local_ssd|mount_model_cache)\b", body, re.MULTILINE):
        add(UBUNTU_MIRRORS[0], "apt-get install of mdadm or nfs-common when the image lacks them")
    dcgm = re.search(r"ensure_package nv-hostengine datacenter-gpu-manager", body)
    if downloads and dcgm and re.search(r"^GPU_METRICS=true$", body, re.MULTILINE):
        add(*NVIDIA_REPOSITORY)
    return hosts


def unreachable(hosts: Mapping[str, Iterable[str]], network: NodeNetwork) -> dict[str, list[str]]:
    """The hosts the network does not answer: {host: [why, ...]}."""
    return {host: list(why) for host, why in sorted(hosts.items()) if not network.reaches(host)}


def host_problems(script: str, network: NodeNetwork, *, key: str = "internet_egress") -> list[Problem]:
    """One problem per host the boot needs and the network cannot reach: the host, why, the fix."""
    problems = []
    for host, why in unreachable(boot_hosts(script), network).items():
        if host.endswith(".googleapis.com") or host.endswith(".pkg.dev"):
            fix = "turn Private Google Access on for the subnet (PrivateNetwork does)"
        elif any(w.startswith("image pull") for w in why):
            fix = f"mirror {host} in Artifact Registry (image_mirrors: LOCATION-docker.pkg.dev/PROJECT/REPO)"
        else:
            fix = (
                "use an image that carries what it installs and list it in preinstalled_packages (the boot "
                "then downloads nothing), or turn that part off, or give the network Cloud NAT"
            )
        problems.append(
            Problem(
                key,
                host,
                f"the node's boot reaches it ({'; '.join(why)}) but its network has {network.describe()}; "
                f"{fix}",
            )
        )
    return problems


__all__ = [
    "ENDPOINTS_ONLY_DOMAINS",
    "PGA_DOMAINS",
    "NodeNetwork",
    "boot_hosts",
    "host_problems",
    "startup_host_problems",
    "unreachable",
    "written_files",
]


def startup_host_problems(
    config: Any, *, internet_egress: bool, reported: Sequence[Problem] = ()
) -> list[Problem]:
    """A fleet's boot (its StartupConfig, rendered here) against the network its `internet_egress` names.

    Hosts a problem in `reported` already names (startup.offline_problems: an unmirrored registry) are
    left out, so one cause is one problem."""
    from inference_infra.components.gcp.startup import folder_problems, render_startup_script

    if folder_problems(config):  # an unpinned or refused folder is the weights' problem, named there
        return []
    try:
        script = render_startup_script(config)
    except ValueError:  # a value the renderer refuses: its own check names it by its input
        return []
    said = " ".join(str(p.allowed) for p in reported)
    problems = host_problems(script, NodeNetwork.of_fleet(internet_egress))
    return [p for p in problems if str(p.value) not in said]
