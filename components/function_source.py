"""The source archive of a function we deploy (an AWS Lambda, a GCP Cloud Run function): which files
it holds, under which names, and its digest. Standard library only; the components turn it into a
`pulumi.AssetArchive`.

A function is a package under `lambdas/` (`lambdas/idle_gpu_watchdog/`). One that imports a shared
package (`lambdas/watchdog_core/`, relatively: `from ..watchdog_core import ...`) ships under the
common parent, as the repository and the installed wheel hold it:

    lambdas/__init__.py
    lambdas/idle_gpu_watchdog/*.py   (+ the component's extra files, e.g. prices.json)
    lambdas/watchdog_core/*.py

and is imported as `lambdas.idle_gpu_watchdog`; one that imports nothing of ours ships alone at the
root (`spot_drain/*.py`, imported as `spot_drain`).

The engine zips an archive of assets the same way every time: members sorted by name, each with a
constant modification time (1990-01-01) and Deflate, and it hashes the members' names and contents,
not the files' times (pulumi/pulumi sdk/go/common/resource/archive/archive.go: `readAssets`,
`addNextFileToZIP`, `EnsureHashWithWD`; read 2026-12-02 at 1b59498). `zip_bytes` builds the same
layout for the tests and `digest` names an upload after its content, so both change only when a
file's name or content does.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ZIP_TIME = (1990, 1, 1, 0, 0, 0)  # the engine's constant member time (see above)

__all__ = ["ZIP_TIME", "FunctionSource", "digest", "zip_bytes"]


def _directory(module: ModuleType) -> Path:
    return Path(str(module.__file__)).resolve().parent


@dataclass(frozen=True)
class FunctionSource:
    """A function's package and the sibling packages it imports (`shared`)."""

    directory: Path
    shared: tuple[Path, ...] = ()

    @classmethod
    def of(cls, module: ModuleType, *, shared: tuple[ModuleType, ...] = ()) -> FunctionSource:
        return cls(_directory(module), tuple(_directory(m) for m in shared))

    def __post_init__(self) -> None:
        strays = [str(p) for p in self.shared if p.parent != self.directory.parent]
        if strays:
            raise ValueError(
                f"FunctionSource {self.directory}: shared packages {strays} are not beside it in "
                f"{self.directory.parent}; a shared package must be a sibling "
                "(components/function_source.py)."
            )

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def prefix(self) -> str:
        """Where the function's package sits in the archive: `lambdas/<name>` or `<name>`."""
        return f"{self.directory.parent.name}/{self.name}" if self.shared else self.name

    @property
    def module(self) -> str:
        """The function's package as the runtime imports it."""
        return self.prefix.replace("/", ".")

    def handler(self, module: str = "handler", function: str = "handler") -> str:
        """`<package>.<module>.<function>`: the Lambda handler string (the runtime imports everything
        before the last dot and takes the attribute after it)."""
        return f"{self.module}.{module}.{function}"

    def members(self) -> dict[str, Path]:
        """Archive name -> source file, for every module of the function and its shared packages."""
        members: dict[str, Path] = {}
        if self.shared:
            parent = self.directory.parent
            members[f"{parent.name}/__init__.py"] = parent / "__init__.py"
            for package in self.shared:
                for path in sorted(package.glob("*.py")):
                    members[f"{parent.name}/{package.name}/{path.name}"] = path
        for path in sorted(self.directory.glob("*.py")):
            members[f"{self.prefix}/{path.name}"] = path
        return dict(sorted(members.items()))

    def files(self, extra: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
        """Archive name -> content: the members, plus `extra` files (name -> content) beside the
        function's modules."""
        files = {name: path.read_bytes() for name, path in self.members().items()}
        files.update({f"{self.prefix}/{name}": content for name, content in (extra or {}).items()})
        return dict(sorted(files.items()))


def zip_bytes(files: Mapping[str, bytes]) -> bytes:
    """A zip of `files` laid out as the engine lays out an archive of assets (see above)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(files):
            member = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            member.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(member, files[name])
    return buffer.getvalue()


def digest(files: Mapping[str, bytes]) -> str:
    """sha256 over every name and content, in name order: what changes when and only when the
    archive's content does."""
    hasher = hashlib.sha256()
    for name in sorted(files):
        hasher.update(name.encode() + b"\0" + files[name] + b"\0")
    return hasher.hexdigest()
