"""Reading Pulumi.yaml and Pulumi.<stack>.yaml the way the engine hands config to a program."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.project import SECRET_PLACEHOLDER, load_project, load_stack


def write(tmp_path, project="name: p\nruntime: python\n", stacks=None, main_py=True):
    (tmp_path / "Pulumi.yaml").write_text(project)
    if main_py:
        (tmp_path / "__main__.py").write_text("")
    for name, text in (stacks or {}).items():
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    return tmp_path


def test_load_stack_encodes_values_as_the_engine_does(tmp_path):
    stack_yaml = """
config:
  aws:region: us-east-1
  p:count: 3
  p:enabled: true
  p:fleets:
    - name: a
      size: 2
  plain: bare-key
"""
    project = load_project(write(tmp_path, stacks={"dev": stack_yaml}))
    config = load_stack(project, "dev").values
    assert config["aws:region"] == "us-east-1"
    assert config["p:count"] == "3"
    assert config["p:enabled"] == "true"
    assert json.loads(config["p:fleets"]) == [{"name": "a", "size": 2}]
    assert config["p:plain"] == "bare-key"


def test_load_stack_turns_secure_values_into_marked_placeholders(tmp_path):
    stack_yaml = "config:\n  p:token:\n    secure: AAABAKq\n  p:nested:\n    url:\n      secure: v1:abc\n"
    stack = load_stack(load_project(write(tmp_path, stacks={"dev": stack_yaml})), "dev")
    assert stack.values["p:token"] == SECRET_PLACEHOLDER
    assert json.loads(stack.values["p:nested"]) == {"url": SECRET_PLACEHOLDER}
    assert set(stack.secret_keys) == {"p:token", "p:nested"}


def test_load_stack_applies_project_defaults(tmp_path):
    project_yaml = (
        "name: p\nruntime: python\nconfig:\n  size:\n    type: integer\n    default: 4\n  p:zone: a\n"
    )
    stack = load_stack(load_project(write(tmp_path, project_yaml, {"dev": "config:\n  p:zone: b\n"})), "dev")
    assert stack.values == {"p:size": "4", "p:zone": "b"}


def test_load_project_finds_main_folder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__main__.py").write_text("")
    project = load_project(write(tmp_path, "name: p\nruntime:\n  name: python\nmain: src/\n", main_py=False))
    assert project.program_dir == (tmp_path / "src").resolve()


def test_load_project_rejects_missing_pulumi_yaml(tmp_path):
    with pytest.raises(InputError, match=r"no Pulumi.yaml in .*pass its folder with --cwd DIR"):
        load_project(tmp_path)


def test_load_project_rejects_other_runtimes(tmp_path):
    with pytest.raises(InputError, match=r"runtime is 'nodejs'; plan runs Python programs only"):
        load_project(write(tmp_path, "name: p\nruntime: nodejs\n"))


def test_load_project_rejects_main_without_program(tmp_path):
    with pytest.raises(InputError, match=r"main 'nowhere/' has no __main__.py"):
        load_project(write(tmp_path, "name: p\nruntime: python\nmain: nowhere/\n"))


def test_load_stack_rejects_unknown_stack_listing_known_ones(tmp_path):
    project = load_project(write(tmp_path, stacks={"dev": "config: {}\n", "prod": "config: {}\n"}))
    with pytest.raises(
        InputError, match=r"unknown stack 'prd' \(did you mean 'prod'\?\).*stacks here: dev, prod"
    ):
        load_stack(project, "prd")


def test_load_stack_rejects_invalid_yaml_with_position(tmp_path):
    project = load_project(write(tmp_path, stacks={"dev": "config:\n  a: [1, 2\n"}))
    with pytest.raises(InputError, match=r"Pulumi.dev.yaml is not valid YAML at line \d+, column \d+"):
        load_stack(project, "dev")


def test_load_stack_rejects_non_mapping_config(tmp_path):
    project = load_project(write(tmp_path, stacks={"dev": "config: [a, b]\n"}))
    with pytest.raises(InputError, match=r"'config' must be a mapping of keys to values; got list"):
        load_stack(project, "dev")
