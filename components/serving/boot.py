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

`NodeFile` is one file of the boot (path, mode, text): the engines' units and scripts come as a
list of them (`EngineUnits.files`), which AWS writes as cloud-init `write_files` and GCP as
base64 lines of its startup script.

Pure data: no Pulumi, no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
