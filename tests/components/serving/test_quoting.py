"""The quoting every unit and script renderer uses (components/serving/quoting.py), checked by the programs
that read the result: any printable word survives systemd's ExecStart= parsing (systemd-analyze verify
accepts the line, and the words read back are the words written) and bash (the word bash prints back is
the word written); control characters are refused, never written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference_infra.components.serving.quoting import (
    Template,
    key_prefix_ok,
    served_name_ok,
    shell_word,
    systemd_exec,
    systemd_value,
    systemd_word,
)
from inference_infra.components.serving.units import exec_words

# Printable text, the characters injections use weighted in: quotes, escapes, specifiers, variables.
SPECIALS = "%$\\\"' ;`*?[]{}()<>|&!#~=\t"
PRINTABLE = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")).filter(
    lambda c: not (0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE)  # noncharacters: refused
)
WORD = st.text(st.one_of(PRINTABLE, st.sampled_from(SPECIALS.replace("\t", ""))), max_size=24).filter(
    lambda w: w != ";"
)
PAYLOADS = [
    "x\nExecStartPre=/bin/sh -c id",
    "a b --trust-remote-code",
    "%n%h%i",
    "${PATH}",
    "$(id)",
    "`id`",
    "*",
    "../../etc/passwd",
    "ENGINE_FILE",
    "a\\",
    "x\x00y",
    "x\ry",
]


@pytest.fixture(scope="module")
def unit_root(tmp_path_factory) -> Path:
    """A scratch root for systemd-analyze verify: the host's unit library and /usr/bin/true."""
    root = tmp_path_factory.mktemp("root")
    shutil.copytree("/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/true").write_text("#!/bin/sh\nexit 0\n")
    (root / "usr/bin/true").chmod(0o755)
    return root


def _verify(root: Path, unit: str) -> subprocess.CompletedProcess:
    (root / "etc/systemd/system/probe.service").write_text(unit)
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.fail("systemd-analyze is not installed; run .ci/system-deps")
    return subprocess.run(
        [tool, "verify", f"--root={root}", "/etc/systemd/system/probe.service"],
        capture_output=True,
        text=True,
        check=False,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(WORD, min_size=1, max_size=5), description=WORD)
def test_systemd_exec_round_trips_any_printable_words(unit_root, words, description):
    line = systemd_exec(["/usr/bin/true", *words])
    unit = f"[Unit]\nDescription={systemd_value(description.rstrip(chr(92)))}\n[Service]\nExecStart={line}\n"
    result = _verify(unit_root, unit)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert exec_words(line, 0, {}) == ["/usr/bin/true", *words]
    assert [k.split("=", 1)[0] for k in unit.splitlines() if "=" in k] == ["Description", "ExecStart"]


def test_systemd_exec_keeps_the_specifiers_and_variables_of_templates_only():
    line = systemd_exec(
        ["/usr/bin/true", Template("inference-engine-%i"), "100%", Template("${ENGINE_PORT}"), "$HOME"]
    )
    assert line == "/usr/bin/true inference-engine-%i 100%% ${ENGINE_PORT} $$HOME"
    assert exec_words(line, 3, {"ENGINE_PORT": "8003"}) == [
        "/usr/bin/true",
        "inference-engine-3",
        "100%",
        "8003",
        "$HOME",
    ]


@pytest.mark.parametrize(
    "word", [*(w for w in PAYLOADS if any(ord(c) < 32 for c in w)), "\ufdd0", "a\u2028b"]
)
def test_systemd_word_rejects_control_characters(word):
    with pytest.raises(ValueError, match="control characters"):
        systemd_word(word)
    with pytest.raises(ValueError, match="control characters"):
        systemd_value(word)
    with pytest.raises(ValueError, match="control characters"):
        shell_word(word)


def test_systemd_word_rejects_a_lone_semicolon():
    with pytest.raises(ValueError, match="separates commands"):
        systemd_word(";")


def test_systemd_value_rejects_a_trailing_backslash():
    with pytest.raises(ValueError, match="line continuation"):
        systemd_value("model\\")


@settings(max_examples=60, deadline=None)
@given(word=WORD)
def test_shell_word_round_trips_through_bash(word):
    script = f"printf '%s' {shell_word(word)}"
    assert subprocess.run(["bash", "-n", "-c", script], check=False).returncode == 0
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, check=False, env={"PATH": "/usr/bin:/bin"}
    )
    assert out.stdout.decode() == word


@settings(max_examples=200, deadline=None)
@given(name=st.one_of(WORD, st.sampled_from(PAYLOADS)))
def test_allow_lists_accept_only_plain_names(name):
    specials = set(SPECIALS + "\n\r\x00 ")
    for ok, allowed in ((served_name_ok, set()), (key_prefix_ok, {"="})):  # key=value folders (Hive style)
        if ok(name):
            assert name
            assert not set(name) & (specials - allowed)
            assert ".." not in name.split("/")
            assert not name.startswith(("-", "/"))


@pytest.mark.parametrize("name", [p for p in PAYLOADS if p != "ENGINE_FILE"])  # a plain word
def test_allow_lists_reject_the_review_payloads(name):
    assert not served_name_ok(name)
    assert not key_prefix_ok(name)
