"""The node boot's shared pieces: the one systemd sandbox and the file list both clouds render.

Every long-running or boot-time unit the library writes on an accelerator node (the engines'
template, their metrics-only proxy, the AWS weights prefetch and serving-load units, the GCP
weights unit) takes its sandbox from `sandbox()`: one definition, so a setting is tightened or
loosened in one place for every unit on both clouds. The units differ only in what the definition
takes as arguments — the folders they write, whether the home folders are readable, which socket
families they open, whether they may map writable code — never in a setting of their own.

What the settings do (systemd.exec(5), systemd 252, the version of Amazon Linux 2023 and of
Ubuntu 22.04's backports; every setting below exists since systemd 247 or earlier):

- the whole file system read-only (`ProtectSystem=strict`) but the folders named writable,
  `/home`, `/root` and `/run/user` hidden or read-only, a private `/tmp`, no devices but the
  pseudo-devices (`PrivateDevices=yes`: the engines' accelerators are opened by dockerd, outside
  the unit);
- no capabilities (`CapabilityBoundingSet=` empty) and no way to gain any (`NoNewPrivileges=yes`,
  `RestrictSUIDSGID=yes`): root keeps only what a file's owner may do, which is all these units
  need (they write folders root owns and talk to dockerd's root-owned socket);
- no kernel tunables, modules, logs, cgroup tree, clock or host name; no new namespaces, no
  realtime scheduling, no personality change; native system calls only.

The whole boot of a node is one `NodeBoot` value: the packages it installs, the file systems it mounts,
the commands that prepare the disks and folders (`prepare`), every file it writes (`NodeFile`: path,
mode, text) and every command it runs after them (`BootStep`), each list in order. Each cloud builds
its node's NodeBoot in one function (components/aws/bootstrap.py `node_boot`, components/gcp/startup.py
`node_boot`) from the fleet's plan; the renderers only turn it into text: AWS into a cloud-config
document (`write_files`, `mounts`, `runcmd`), GCP into its startup script (a base64 line per file, a
shell line per step). Adding a file to a node's boot is one NodeFile in that list; a unit it starts,
one BootStep. The pieces both clouds run alike come from here: the engines' part (`EngineUnits.files`)
a host exporter's container (`exporter_step`) and the docker client's credential helpers for the
image mirrors (`credential_helpers`: the path and the helper are the cloud's).

Pure data: no Pulumi, no network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from inference_infra.components.monitoring.host_exporters import TEXTFILE_DIR, exporter_command

# The socket families a unit may open: IP for the cloud APIs and the engines' ports, UNIX for
# dockerd's socket and the journal, NETLINK for the interface lists Go and glibc programs read.
IP_FAMILIES = ("AF_INET", "AF_INET6")
DEFAULT_FAMILIES = ("AF_UNIX", *IP_FAMILIES, "AF_NETLINK")


@dataclass(frozen=True)
class NodeFile:
    """One file the boot writes on a node."""

    path: str
    text: str
    mode: str = "0644"


class NodePath(str):
    """A path on the node as a word of a BootStep: a renderer that runs the boot below a root folder
    (GCP's script, whose tests run it in a scratch directory) prefixes it; AWS writes it as it is."""


@dataclass(frozen=True)
class BootStep:
    """One command of the boot, run in order (as root) after the files are written (or, in
    `NodeBoot.prepare`, before: the disks and folders the files go to).

    argv: the program and its words, each one word (the renderers quote them);
    warning: with it, a failure is logged as "warning: <warning>" and the boot goes on; without it, a
        failure stops GCP's script (`set -e`); cloud-init's runcmd goes on after any failure;
    environment: variables for this command only;
    quiet: its standard output is discarded (a container id, say).
    """

    argv: tuple[str, ...]
    warning: str | None = None
    environment: Mapping[str, str] | None = None
    quiet: bool = False


@dataclass(frozen=True, kw_only=True)
class NodeBoot:
    """The whole boot of a node, in order: install, mount, prepare, write, run."""

    packages: tuple[str, ...] = ()  # installed first, in one call of the image's package manager
    mounts: tuple[tuple[str, ...], ...] = ()  # fstab entries (cloud-init's `mounts`)
    prepare: tuple[BootStep, ...] = ()  # before the files: the disks, mounts and folders they need
    files: tuple[NodeFile, ...] = ()
    steps: tuple[BootStep, ...] = ()
    done: str = ""  # what the boot logs when it completes (GCP's script; cloud-init logs its own)


def textfile_folder() -> BootStep:
    """The node exporter's textfile folder, made before the weights unit publishes its verification
    gauge there (both clouds)."""
    return BootStep(("mkdir", "-p", NodePath(TEXTFILE_DIR)))


def credential_helpers(
    path: str, hosts: Sequence[str], helper: str, *, indent: int | None = None
) -> NodeFile:
    """The docker client's config.json naming `helper` (docker-credential-<helper>: AWS's `ecr-login`,
    GCP's `gcloud`) for each mirror registry host: the node pulls from its private mirrors with its own
    identity, no stored password (0600: the client reads it as root)."""
    helpers = dict.fromkeys(hosts, helper)
    return NodeFile(path, json.dumps({"credHelpers": helpers}, indent=indent) + "\n", "0600")


def exporter_step(name: str, image: str, *, gpus: bool, docker_config: str | None = None) -> BootStep:
    """A host exporter's container (components/monitoring/host_exporters.py `exporter_command`): its
    failure is a warning (the node serves without it); `docker_config`: the folder of the docker client
    configuration that names the mirrors' credential helper, when not root's own."""
    return BootStep(
        tuple(exporter_command(name, image, gpus=gpus)),
        warning=f"{name} did not start",
        environment={"DOCKER_CONFIG": docker_config} if docker_config else None,
        quiet=True,
    )


def sandbox(
    writable: Sequence[str] = (),
    *,
    home: str = "yes",
    families: Sequence[str] = DEFAULT_FAMILIES,
    no_writable_code: bool = False,
    optional_writable: bool = False,
) -> list[str]:
    """The [Service] sandbox lines of a node unit.

    writable: the folders the unit may write (everything else is read-only);
    home: "yes" (hidden) or "read-only" (the engines' docker client reads /root/.docker/config.json);
    families: the socket families it may open;
    no_writable_code: MemoryDenyWriteExecute=yes (no JIT, no writable-then-executable pages);
    optional_writable: the writable folders may be missing at start ("-": created later by the unit).
    """
    if home not in ("yes", "read-only"):
        raise ValueError(f"sandbox home {home!r} must be 'yes' or 'read-only'")
    prefix = "-" if optional_writable else ""
    lines = ["ProtectSystem=strict"]
    lines += [f"ReadWritePaths={prefix}{path}" for path in writable]
    lines += [
        f"ProtectHome={home}",
        "PrivateTmp=yes",
        "PrivateDevices=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "AmbientCapabilities=",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "RestrictSUIDSGID=yes",
        "RestrictNamespaces=yes",
        "RestrictRealtime=yes",
        "LockPersonality=yes",
        "SystemCallArchitectures=native",
        f"RestrictAddressFamilies={' '.join(families)}",
    ]
    if no_writable_code:
        lines.append("MemoryDenyWriteExecute=yes")
    return lines
