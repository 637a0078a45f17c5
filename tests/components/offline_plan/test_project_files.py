"""Pulumi.yaml and stack files read as Pulumi reads them: YAML 1.2, declared config, provider keys."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.components.offline_plan.yaml12 import load

PROGRAM = """
import pulumi
config = pulumi.Config()
pulumi.export("mode", config.get("mode"))
pulumi.export("answer", config.get("answer"))
pulumi.export("replicas", config.get_int("replicas"))
"""


def _project(pulumi_project, project_config: str, stack: str):
    folder = pulumi_project(PROGRAM, {"dev": stack})
    (folder / "Pulumi.yaml").write_text(f"name: outside\nruntime: python\nconfig:\n{project_config}")
    return folder


@pytest.mark.parametrize(
    ("text", "value"),
    [("off", "off"), ("on", "on"), ("yes", "yes"), ("No", "No"), ("010", 10), ("0o10", 8), ("1:20", "1:20")],
)
def test_yaml12_keeps_yaml11_booleans_and_octals_as_pulumi_does(text, value):
    assert load(f"key: {text}\n") == {"key": value}


def test_yaml12_reads_true_false_null_and_numbers():
    assert load("a: true\nb: False\nc: ~\nd: 1.5\ne: 0x1F\n") == {
        "a": True,
        "b": False,
        "c": None,
        "d": 1.5,
        "e": 31,
    }


def test_plan_applies_project_defaults_as_yaml12_strings(pulumi_project):
    folder = _project(
        pulumi_project,
        "  mode:\n    type: string\n    default: off\n  replicas:\n    type: integer\n    default: 2\n",
        "config:\n  outside:answer: yes\n",
    )
    outputs = plan(folder, "dev").capture.stack_outputs
    assert outputs["mode"] == "off"
    assert outputs["answer"] == "yes"
    assert outputs["replicas"] == 2


def test_plan_rejects_a_value_of_the_wrong_declared_type_naming_the_stack_file(pulumi_project):
    folder = _project(
        pulumi_project, "  replicas:\n    type: integer\n", "config:\n  outside:replicas: many\n"
    )
    with pytest.raises(
        InputError, match=r"Pulumi\.dev\.yaml: outside:replicas 'many' must be of type integer"
    ):
        plan(folder, "dev")


def test_plan_accepts_declared_integers_and_booleans_written_as_strings_by_pulumi_config_set(
    pulumi_project,
):
    # `pulumi config set replicas 2` writes replicas: "2"; Pulumi's type check accepts it.
    folder = _project(
        pulumi_project,
        "  replicas:\n    type: integer\n  enabled:\n    type: boolean\n",
        'config:\n  outside:replicas: "2"\n  outside:enabled: "true"\n',
    )
    assert plan(folder, "dev").capture.stack_outputs["replicas"] == 2


@pytest.mark.parametrize(("value", "kind"), [('"2.5"', "integer"), ('"yes"', "boolean"), ("1.5", "integer")])
def test_plan_rejects_strings_that_are_not_the_declared_type(pulumi_project, value, kind):
    folder = _project(
        pulumi_project, f"  replicas:\n    type: {kind}\n", f"config:\n  outside:replicas: {value}\n"
    )
    with pytest.raises(InputError, match=rf"outside:replicas .* must be of type {kind}"):
        plan(folder, "dev")


def test_plan_rejects_a_declared_key_without_default_left_unset(pulumi_project):
    folder = _project(pulumi_project, "  replicas:\n    type: integer\n", "config: {}\n")
    with pytest.raises(InputError, match=r"outside:replicas is declared in Pulumi\.yaml with no default"):
        plan(folder, "dev")


def test_plan_rejects_an_unknown_declared_type(pulumi_project):
    folder = _project(pulumi_project, "  replicas:\n    type: number\n", "config: {}\n")
    with pytest.raises(InputError, match=r"type 'number' is not one Pulumi knows"):
        plan(folder, "dev")


def test_plan_warns_of_a_provider_key_the_provider_does_not_define(pulumi_project):
    folder = _project(pulumi_project, "  mode: fast\n", "config:\n  aws:regoin: us-west-2\n")
    warnings = plan(folder, "dev").warnings()
    assert any("aws:regoin is not a setting of the installed pulumi_aws provider" in w for w in warnings)
    assert any("did you mean aws:region?" in w for w in warnings)


def test_plan_takes_provider_keys_the_provider_defines_without_warning(pulumi_project):
    stack = "config:\n  aws:region: us-west-2\n  gcp:project: p\n  kubernetes:context: kind\n"
    folder = _project(pulumi_project, "  mode: fast\n", stack)
    assert not [w for w in plan(folder, "dev").warnings() if "is not a setting" in w]


@pytest.mark.parametrize("namespace", ["aws", "gcp", "kubernetes"])
def test_provider_config_keys_read_from_source_match_the_imported_sdk(namespace):
    """The keys read from the SDK's generated provider.py (without importing it: a stack refused as it
    is read should not wait for pulumi_gcp) are exactly those of its ProviderArgs."""
    from inference_infra.components.offline_plan import project

    probe = (
        "import json, sys\n"
        "from inference_infra.components.offline_plan.project import provider_config_keys\n"
        f"keys = provider_config_keys({namespace!r})\n"
        f"print(json.dumps([sorted(keys), {project._PROVIDERS[namespace]!r} in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    keys, imported = json.loads(run.stdout)
    assert not imported
    module = importlib.import_module(project._PROVIDERS[namespace])
    params = inspect.signature(module.ProviderArgs.__init__).parameters
    assert keys == sorted(project._camel(p) for p in params if p != "__self__")
    assert "region" in keys or namespace == "kubernetes"


def test_yaml12_refuses_a_key_given_twice_naming_both_lines():
    with pytest.raises(Exception, match=r"key 'aws:region' is given twice, at line 2 and at line 4"):
        load("config:\n  aws:region: us-east-1\n  gcp:project: p\n  aws:region: eu-west-1\n")
    assert load("a: {x: 1}\nb: {x: 2}\n") == {"a": {"x": 1}, "b": {"x": 2}}  # one key per mapping


def test_plan_exits_2_on_a_duplicate_key_in_a_stack_file_naming_both_lines(pulumi_project, capsys):
    from inference_infra.components.cli import main

    stack = "config:\n  aws:region: us-east-1\n  mode: fast\n  aws:region: eu-west-1\n"
    folder = _project(pulumi_project, "  mode: fast\n", stack)
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Pulumi.dev.yaml is not valid YAML at line 4" in err
    assert "'aws:region' is given twice, at line 2 and at line 4" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("given", ["dev", "acme/dev", "acme/outside/dev"])
def test_plan_takes_org_qualified_stack_names_as_pulumi_does(pulumi_project, given):
    """`pulumi --stack` takes name, org/name and org/project/name; the file is Pulumi.<name>.yaml and
    the program's get_stack() is the name (pulumi v3.259.0 httpstate ParseStackReference)."""
    program = "import pulumi\npulumi.export('stack', pulumi.get_stack())\n"
    folder = pulumi_project(program, {"dev": "config:\n  aws:region: us-east-1\n"})
    assert plan(folder, given).capture.stack_outputs["stack"] == "dev"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("acme/other/dev", r"names a stack of project 'other', but the Pulumi.yaml .* is project 'outside'"),
        ("a/b/c/d", r"is not a stack name: .* org/name or org/project/name"),
        ("acme//dev", r"is not a stack name"),
        ("../dev", r"is not a stack name"),
    ],
)
def test_plan_refuses_stack_references_pulumi_would_not_resolve_here(pulumi_project, given, message):
    folder = pulumi_project("import pulumi\n", {"dev": "config: {}\n"})
    with pytest.raises(InputError, match=message):
        plan(folder, given)
