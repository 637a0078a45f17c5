"""Installs the repository's folders under one import package, `inference_infra`.

The repository keeps its fixed top level (components/, infra/, lambdas/, policy/);
an installed copy puts them under `inference_infra.` so they never collide with a
user's own `components` or `policy` package. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

NAMESPACE = "inference_infra"
FOLDERS = ("components", "infra", "lambdas", "policy")

packages = [
    f"{NAMESPACE}.{name}"
    for name in find_namespace_packages(include=[f"{folder}*" for folder in FOLDERS])
    if "__pycache__" not in name
]

setup(
    packages=packages,
    package_dir={f"{NAMESPACE}.{folder}": folder for folder in FOLDERS},
)
