"""Review 5: an allow-list pattern `^...$` is checked with fullmatch, never match or search.

Python's `$` also matches just before a trailing newline, so `re.match(r"^[a-z]+$", "chat\\n")`
succeeds: with `.match`, every allow-list that guards a unit file, a shell script, a Kubernetes object
or an IAM document let a value ending in a newline through (the weights prefix, served model names,
cache paths, gateway and label names...). The quoting layer then refused the newline while the engine
was already registering resources, in an error that named neither the input nor what is allowed.
This test reads the source: a pattern whose text ends with an unescaped `$` must not be applied with
`.match(`, nor with `.search(` when it also starts with `^` (an anchored whole-string check).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from inference_infra.components.aws import GpuFleet, GpuFleetArgs, S3Weights, SubnetRef
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.serving.quoting import (
    absolute_path_ok,
    key_prefix_ok,
    plain_name_ok,
    served_name_ok,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("components", "infra", "lambdas", "policy")


def _ends_with_dollar(text: str) -> bool:
    return text.endswith("$") and not text.endswith("\\$")


def _literal(node: ast.AST) -> str | None:
    """The pattern's text as far as it decides the anchors: a literal, an f-string's first and last
    literal parts, or the ends of a '+' concatenation ('' stands for the computed middle)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        ends = [node.values[0], node.values[-1]]
        texts = [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "" for v in ends]
        return texts[0] + texts[1] if len(node.values) > 1 else texts[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return (left or "") + (right or "") if left is not None or right is not None else None
    return None


def _compiled(tree: ast.AST) -> dict[str, tuple[str, bool]]:
    """Names bound to re.compile(<literal ending in $>): their pattern and whether flags were given."""
    found = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "compile" and call.args):
            continue
        text = _literal(call.args[0])
        if text is not None and _ends_with_dollar(text):
            flags = len(call.args) > 1 or bool(call.keywords)
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                if name:
                    found[name] = (text, flags)
    return found


def loose_anchors(path: Path, root: Path = REPO_ROOT) -> list[str]:
    """`file:line name.method` for each whole-string pattern applied with match (or an anchored search)."""
    tree = ast.parse(path.read_text())
    compiled = _compiled(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        if method not in ("match", "search"):
            continue
        owner = node.func.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
        if name == "re" and node.args and _literal(node.args[0]) is not None:
            pattern, flags = _literal(node.args[0]), len(node.args) > 2 or bool(node.keywords)
        elif name in compiled:
            pattern, flags = compiled[name]
        else:
            continue
        if not isinstance(pattern, str) or not _ends_with_dollar(pattern):
            continue
        if method == "search" and (flags or not pattern.startswith("^")):
            continue  # a suffix search or a multi-line scan, not a whole-string check
        out.append(f"{path.relative_to(root)}:{node.lineno} {name}.{method}")
    return out


def _sources(keep) -> list[Path]:
    files = []
    for folder in FOLDERS:
        files += [
            p for p in sorted((REPO_ROOT / folder).rglob("*.py")) if keep(str(p.relative_to(REPO_ROOT)))
        ]
    return files


def test_whole_string_patterns_use_fullmatch():
    found = [hit for path in _sources(lambda rel: True) for hit in loose_anchors(path)]
    assert found == []


def test_loose_anchors_finds_a_match_on_a_dollar_pattern(tmp_path):
    # The detector itself: red on the shape this review found, quiet on fullmatch and suffix searches.
    source = tmp_path / "probe.py"
    source.write_text(
        "import re\n"
        "_A = re.compile(r'^[a-z]+$')\n"
        "_B = re.compile(r'\\.bin$')\n"
        "_C = re.compile(rf'^{_A.pattern}(,x)*$')\n"
        "_D = re.compile(r'^s3://' + 'b' + '$')\n"
        "ok = _A.fullmatch('x') and _B.search('x.bin') and _C.fullmatch('a')\n"
        "bad = _A.match('x') or re.match(r'^[0-9]+$', '1') or _C.match('a') or _D.search('s3://b')\n"
    )
    assert loose_anchors(source, tmp_path) == [
        "probe.py:7 _A.match",
        "probe.py:7 re.match",
        "probe.py:7 _C.match",
        "probe.py:7 _D.search",
    ]


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (key_prefix_ok, "meta-llama/Llama-3.1-8B\n"),
        (served_name_ok, "llama-3.1-8b\n"),
        (plain_name_ok, "chat\n"),
        (absolute_path_ok, "/models\n"),
    ],
)
def test_quoting_allow_lists_reject_a_trailing_newline(check, value):
    assert check(value.rstrip("\n"))
    assert not check(value)


@pytest.mark.parametrize(
    ("field", "named"),
    [("cache_path", "cache_path"), ("prefix", "weights.prefix")],
)
def test_aws_fleet_names_the_input_of_a_trailing_newline_before_registering(field, named, tagged, plan_of):
    # Before: '/models\n' passed the allow-list and the unit writer raised inside the launch template's
    # user data Output, naming neither input nor rule, after the fleet's first resources had registered.
    weights = {"bucket_name": "acme-models", "prefix": "llama", "manifest_sha256": "9" * 64}
    extra = {}
    if field == "prefix":
        weights["prefix"] = "llama\n"
    else:
        extra["cache_path"] = "/models\n"
    with pytest.raises(InputError, match=rf"{named} '[^']*\\n'"):
        GpuFleet(
            "chat",
            GpuFleetArgs(
                vpc_id="vpc-0123456789abcdef0",
                subnets=[SubnetRef(id="subnet-0aaaaaaaaaaaaaaaa", availability_zone="us-east-1a")],
                spot=1,
                model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16),
                weights=S3Weights(**weights),
                **extra,
            ),
        )
    assert not [r for r in plan_of().resources if r.custom]


def test_gcp_watchdog_rejects_a_label_key_with_a_trailing_newline():
    # The pattern reaches the check as an argument (_match(value, pattern)), out of the source test's sight.
    from inference_infra.components.gcp import IdleGpuWatchdogArgs
    from inference_infra.components.gcp.idle_watchdog_args import validate_idle_watchdog

    problems = validate_idle_watchdog(IdleGpuWatchdogArgs(tag_key="auto-shutdown\n"))
    assert [p.input for p in problems] == ["tag_key"]


def test_aws_fleet_api_key_parameter_with_a_trailing_newline_is_refused():
    from inference_infra.components.aws.fleet_args import _node_secret_problems

    args = GpuFleetArgs(
        instance_type="g6.xlarge",
        vpc_id="vpc-0123456789abcdef0",
        subnets=[SubnetRef(id="subnet-0aaaaaaaaaaaaaaaa", availability_zone="us-east-1a")],
        spot=1,
        api_key="/inference-infra/chat/api-key\n",
    )
    assert [p.input for p in _node_secret_problems(args)] == ["api_key"]


def test_elastic_schedule_rejects_days_with_a_trailing_newline():
    from inference_infra.components.fleet import ScheduleArgs
    from inference_infra.components.fleet.elastic import schedule_problems

    schedule = ScheduleArgs(
        time_zone="Europe/Berlin", start_hour=8, end_hour=19, off_hours_size=0, days="MON-FRI\n"
    )
    assert [p.input for p in schedule_problems(schedule, key="elastic.schedule")] == ["elastic.schedule.days"]
