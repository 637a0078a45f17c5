"""Loading any Python policy pack without serving it, and reconciling its config like the engine."""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path

import pulumi_policy
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.policy_pack import load_pack, read_config_file, reconcile
from inference_infra.policy.rules import POLICIES

OUR_PACK = Path(__file__).resolve().parents[3] / "policy"

ACME_MAIN = """
from pulumi_policy import (
    EnforcementLevel, PolicyConfigSchema, PolicyPack, ResourceValidationPolicy, StackValidationPolicy,
)
from acme_rules import forbidden_names

names = ResourceValidationPolicy(
    name="bucket-names",
    description="Buckets avoid forbidden names.",
    validate=forbidden_names,
    config_schema=PolicyConfigSchema(
        properties={"forbidden": {"type": "array", "items": {"type": "string"}, "default": []}}
    ),
)
count = StackValidationPolicy(
    name="few-buckets",
    description="At most a few buckets.",
    validate=lambda args, report: None,
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=PolicyConfigSchema(properties={"max": {"type": "integer", "minimum": 1}}, required=["max"]),
)
PolicyPack(
    name="acme",
    policies=[names, count],
    enforcement_level=EnforcementLevel.MANDATORY,
    initial_config={"bucket-names": {"forbidden": ["x"]}, "few-buckets": {"max": 3}},
)
print("after PolicyPack: never reached")
"""

ACME_RULES = """
def forbidden_names(args, report):
    if args.props.get("bucket") in args.get_config()["forbidden"]:
        report(f"bucket {args.props['bucket']!r} is forbidden")
"""


@pytest.fixture
def write_pack(tmp_path: Path):
    def write(
        main: str, rules: str = ACME_RULES, manifest: str = "runtime: python\nversion: 1.2.3\n"
    ) -> Path:
        pack = tmp_path / "acme-pack"
        pack.mkdir()
        (pack / "PulumiPolicy.yaml").write_text(manifest)
        (pack / "__main__.py").write_text(textwrap.dedent(main))
        (pack / "acme_rules.py").write_text(textwrap.dedent(rules))
        return pack

    return write


def test_load_pack_captures_a_third_party_packs_policies_without_serving(write_pack, capsys):
    real = pulumi_policy.PolicyPack
    pack = load_pack(write_pack(ACME_MAIN))
    assert (pack.name, pack.version, pack.label) == ("acme", "1.2.3", "acme@v1.2.3")
    assert [p.name for p in pack.policies] == ["bucket-names", "few-buckets"]
    assert pack.enforcement_level is pulumi_policy.EnforcementLevel.MANDATORY
    assert pack.initial_config == {"bucket-names": {"forbidden": ["x"]}, "few-buckets": {"max": 3}}
    assert "never reached" not in capsys.readouterr().out
    assert pulumi_policy.PolicyPack is real
    assert "acme_rules" not in sys.modules  # the pack's own modules do not leak into the next load


def test_load_pack_captures_a_pack_module_imported_before(write_pack, monkeypatch):
    build = """
    from pulumi_policy import PolicyPack, ResourceValidationPolicy

    def build():
        rule = ResourceValidationPolicy(name="r", description="d", validate=lambda args, report: None)
        PolicyPack(name="early", policies=[rule])
    """
    folder = write_pack("from acme_build import build\nbuild()\n")
    (folder / "acme_build.py").write_text(textwrap.dedent(build))
    monkeypatch.syspath_prepend(str(folder))
    import acme_build  # bound to the real PolicyPack before the load, as in a long-lived process

    loaded: list = []
    try:
        worker = threading.Thread(target=lambda: loaded.append(load_pack(folder)), daemon=True)
        worker.start()
        worker.join(timeout=30)  # the real PolicyPack would serve forever
        assert [p.name for p in loaded[0].policies] == ["r"]
        assert acme_build.PolicyPack is pulumi_policy.PolicyPack
    finally:
        del sys.modules["acme_build"]


def test_load_pack_loads_this_projects_pack():
    pack = load_pack(OUR_PACK)
    assert pack.label == "inference-infra@v0.1.0"
    assert len(pack.policies) == len(POLICIES)


@pytest.mark.parametrize(
    ("main", "manifest", "fragment"),
    [
        ("x = 1\n", "runtime: python\n", "__main__.py never constructs a pulumi_policy.PolicyPack"),
        ("raise RuntimeError('boom')\n", "runtime: python\n", "failed while loading: RuntimeError: boom"),
        (ACME_MAIN, "runtime: nodejs\n", "runtime is 'nodejs'; plan evaluates Python policy packs only"),
        (
            "from pulumi_policy import PolicyPack\nPolicyPack(name='bad name', policies=[])\n",
            "runtime: python\n",
            "2 problems: (1) name 'bad name' must be 1-100 letters",
        ),
    ],
)
def test_load_pack_rejects_broken_packs(write_pack, main, manifest, fragment):
    with pytest.raises(InputError) as caught:
        load_pack(write_pack(main, manifest=manifest))
    assert fragment in str(caught.value)


def test_load_pack_rejects_a_folder_that_is_not_a_pack(tmp_path):
    with pytest.raises(InputError, match=r"is not a policy pack: it has no PulumiPolicy\.yaml"):
        load_pack(tmp_path)


def test_reconcile_layers_defaults_initial_config_and_the_file(write_pack):
    pack = load_pack(write_pack(ACME_MAIN))
    settings = reconcile(pack, {"few-buckets": ("mandatory", {"max": 5})}, "f.json")
    assert settings["bucket-names"].enforcement.value == "mandatory"  # the pack's default level
    assert dict(settings["bucket-names"].properties) == {"forbidden": ["x"]}  # initial_config over default
    assert settings["few-buckets"].enforcement.value == "mandatory"  # the file over the policy's advisory
    assert dict(settings["few-buckets"].properties) == {"max": 5}
    everything = reconcile(pack, {"all": ("disabled", {}), "few-buckets": ("advisory", {})}, "f.json")
    assert [s.enforcement.value for s in everything.values()] == ["disabled", "advisory"]


def test_reconcile_rejects_unknown_policies_settings_and_invalid_values(write_pack):
    pack = load_pack(write_pack(ACME_MAIN))
    given = {
        "bucket-name": (None, {}),
        "bucket-names": (None, {"forbiden": ["y"]}),
        "few-buckets": (None, {"max": 0}),
        "all": ("advisory", {"max": 1}),
    }
    with pytest.raises(InputError) as caught:
        reconcile(pack, given, "policy/config/dev.json")
    assert str(caught.value) == (
        "policy config policy/config/dev.json: 4 problems: (1) all ['max'] takes only an enforcement level; "
        "(2) policy 'bucket-name' is not a policy of pack acme (did you mean 'bucket-names'?); "
        "(3) bucket-names setting 'forbiden' is not one it takes (did you mean 'forbidden'?); "
        "(4) few-buckets.max 0 must be at least 1."
    )


def test_read_config_file_reads_levels_and_settings(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"all": "advisory", "a": {"enforcementLevel": "disabled", "x": 1}, "b": {"y": [2]}}')
    assert read_config_file(path) == {
        "all": ("advisory", {}),
        "a": ("disabled", {"x": 1}),
        "b": (None, {"y": [2]}),
    }
    path.write_text("  \n")
    assert read_config_file(path) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": "mandatry"}',
            "a.enforcementLevel 'mandatry' is not an enforcement level; allowed: advisory, ",
        ),
        ('{"a": 3}', "a 3 must be an enforcement level or an object of settings"),
        ("[1]", "must be a JSON object of policy names; got list"),
        ('{"a": {', "is not valid JSON at line 1, column 8"),
    ],
)
def test_read_config_file_rejects_bad_files(tmp_path, text, message):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_config_file(path)
    assert message in str(caught.value)
