"""Review 5: the runbook URL every alert links to cannot break the rule file.

Every annotation is a Go template Prometheus expands, and a file with one that does not parse is refused
whole: GpuObservability(runbook_url="https://wiki/gpu{{end}}") planned, and promtool refused every rule.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from inference_infra.components.monitoring.rules import (
    RuleSettings,
    render_rules_yaml,
    validate_rule_settings,
)


@pytest.mark.parametrize(
    "url",
    [
        "https://wiki.example.com/gpu{{end}}",
        "https://wiki.example.com/{{ $labels.instance }}",
        "https://wiki.example.com/runbook#top",  # each alert appends '#<name>'
        "https://wiki.example.com/a b",
        'https://wiki.example.com/a"b',
        "https://wiki.example.com/a|b>",
        "https://wiki.example.com/a\nb",
        "javascript:alert(1)",
        "https://wiki.example.com/" + "a" * 500,
    ],
)
def test_rule_settings_rejects_runbook_url_that_breaks_the_rule_file(url):
    problems = validate_rule_settings(RuleSettings(runbook_url=url))
    assert [p.input for p in problems] == ["rules.runbook_url"]


@pytest.mark.parametrize(
    "url",
    [
        "https://wiki.example.com/gpu-runbook",
        "https://github.com/acme/ops/blob/main/RUNBOOK.md",
        "http://runbooks.internal:8080/gpu?team=ml&v=2",
        "https://wiki.example.com/pages/viewpage.action?pageId=123%20",
    ],
)
def test_rule_settings_accepts_plain_runbook_urls(url):
    assert validate_rule_settings(RuleSettings(runbook_url=url)) == []


def test_rule_file_with_an_accepted_runbook_url_passes_promtool(tmp_path: Path):
    # The accepted URL shape, rendered: promtool parses every annotation as a template.
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed (Debian package prometheus)"
    url = "http://runbooks.internal:8080/gpu?team=ml&v=2;x=$y(1)"
    assert validate_rule_settings(RuleSettings(runbook_url=url)) == []
    path = tmp_path / "rules.yml"
    path.write_text(render_rules_yaml(RuleSettings(runbook_url=url)))
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rules = yaml.safe_load(path.read_text())["groups"][0]["rules"]
    assert rules[0]["annotations"]["runbook_url"].startswith(url + "#")


def test_rule_file_with_a_template_in_the_runbook_url_fails_promtool(tmp_path: Path):
    # Why the check exists: the same renderer with '{{end}}' in the URL is a file promtool refuses whole.
    promtool = shutil.which("promtool")
    assert promtool
    path = tmp_path / "rules.yml"
    path.write_text(render_rules_yaml(RuleSettings(runbook_url="https://wiki.example.com/gpu{{end}}")))
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "unexpected {{end}}" in done.stdout + done.stderr
