"""Lazy package exports: `from inference_infra.components.aws import GpuFleet` imports only gpu_fleet."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], list[str]]:
    """A module `__getattr__` resolving each name from its submodule, and `__all__`."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (a module __getattr__)
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__, sorted(exports)
