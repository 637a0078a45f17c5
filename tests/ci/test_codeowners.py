"""CODEOWNERS: a review by the owning team on every change to the policy pack and its config, the stack
files, the reference stack's program and the workflow that judges pull requests (#33 item 9).

GitHub's CODEOWNERS syntax follows gitignore's, the last matching line wins, and a line with no owner
removes ownership (docs.github.com, "About code owners", "CODEOWNERS syntax", read 2026-12-02). The file
keeps to anchored patterns (`/dir/`, `/name`, `/name.*.ext`); `_owners` implements that subset and the
first test refuses any other shape, so the matcher cannot silently disagree with GitHub's."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CODEOWNERS = REPO_ROOT / ".github" / "CODEOWNERS"
PLACEHOLDER = "@your-org/platform-infra"
_PATTERN = re.compile(r"/[A-Za-z0-9_.*-]+(/[A-Za-z0-9_.*-]+)*/?")
_OWNER = re.compile(r"@[A-Za-z0-9-]+(/[A-Za-z0-9_.-]+)?|[^@\s]+@[^@\s]+")


def _rules(text: str) -> list[tuple[str, list[str]]]:
    rules = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pattern, *owners = line.split()
            rules.append((pattern, owners))
    return rules


def _matches(pattern: str, path: str) -> bool:
    if pattern.endswith("/"):  # a folder: everything beneath it
        return path.startswith(pattern[1:])
    # an anchored file pattern: `*` does not cross `/` (fnmatch's does, so compare segment by segment)
    want, got = pattern[1:].split("/"), path.split("/")
    return len(want) == len(got) and all(fnmatch.fnmatchcase(g, w) for w, g in zip(want, got, strict=True))


def _owners(path: str) -> list[str]:
    owners: list[str] = []
    for pattern, who in _rules(CODEOWNERS.read_text()):
        if _matches(pattern, path):
            owners = who  # the last match wins, even an empty one
    return owners


def test_codeowners_keeps_to_the_shapes_the_test_reads():
    rules = _rules(CODEOWNERS.read_text())
    assert rules
    for pattern, owners in rules:
        assert _PATTERN.fullmatch(pattern), pattern
        assert "**" not in pattern, pattern
        assert owners, f"{pattern} has no owner: it would remove ownership from what earlier lines cover"
        for owner in owners:
            assert _OWNER.fullmatch(owner), owner


@pytest.mark.parametrize(
    "path",
    [
        "policy/__main__.py",
        "policy/PulumiPolicy.yaml",
        "policy/config/prod.json",
        "policy/config/dev.json",
        "policy/config/staging.json",  # a config a pull request adds
        "policy/rules/new_rule.py",
        "Pulumi.yaml",
        "Pulumi.dev.yaml",
        "Pulumi.prod.yaml",
        "Pulumi.prod-eu.yaml",  # a stack a pull request adds
        "infra/aws_stack.py",
        "infra/config.schema.json",
        "infra/new/module.py",
        ".github/CODEOWNERS",  # else a pull request could drop the rest
        ".github/workflows/pull-request.yml",  # else it could judge itself with its own pack
        ".github/workflows/another.yml",
    ],
)
def test_codeowners_covers_the_paths_that_decide_a_deploy(path):
    assert _owners(path) == [PLACEHOLDER]


def test_codeowners_covers_every_committed_stack_file_policy_and_infra_file():
    committed = [p.relative_to(REPO_ROOT).as_posix() for p in REPO_ROOT.glob("Pulumi*.yaml")]
    for folder in ("policy", "infra"):
        committed += [
            p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        ]
    assert len(committed) > 10
    assert [p for p in committed if not _owners(p)] == []


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "components/aws/launch.py",
        "tests/ci/test_codeowners.py",
        "docs/policy/x.md",  # `policy` elsewhere than the root is not the pack
        "examples/infra/x.py",
        "Pulumi.prod.yaml.bak",  # anchored, the extension matters
        "sub/Pulumi.dev.yaml",
    ],
)
def test_codeowners_leaves_the_rest_to_ordinary_review(path):
    assert _owners(path) == []


def test_the_matcher_follows_last_match_wins_and_empty_owner_lines():
    """The matcher's own behaviour on a careless file: a later line without owners un-owns a path."""
    rules = _rules("/policy/ @a/b\n/policy/config/ # no owner\n/Pulumi.*.yaml @a/b @c\n")
    assert rules[1] == ("/policy/config/", [])
    assert _matches("/Pulumi.*.yaml", "Pulumi.x.yaml")
    assert not _matches("/Pulumi.*.yaml", "Pulumi.yaml")
    assert not _matches("/Pulumi.*.yaml", "a/Pulumi.x.yaml")
    assert _matches("/policy/", "policy/config/prod.json")
    assert not _matches("/policy/", "policyx/a")


def test_readme_tells_users_to_replace_the_placeholder_team():
    readme = (REPO_ROOT / "README.md").read_text()
    assert ".github/CODEOWNERS" in readme
    assert PLACEHOLDER in readme
    assert "Require review from Code Owners" in readme
