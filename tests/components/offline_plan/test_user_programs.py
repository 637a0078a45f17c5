"""The plan on accelerator programs shaped like public ones the team did not write.

Each program is a trimmed sketch, in our own words, of a shape found in a public repository; the
test asserts what the program's owner would want the plan to report.
"""

from __future__ import annotations

import pytest

from inference_infra.components.offline_plan import ProgramError, plan

# A self-hosted LLM program that also manages a Tailscale device: the provider package is listed in
# its requirements.txt but not installed where the plan runs.
MISSING_PROVIDER = """
import pulumi
import pulumi_kubernetes as k8s
import pulumi_tailnet_offline_absent as tailnet

k8s.core.v1.Namespace("llm")
"""


def test_plan_names_a_missing_provider_package_and_the_line_that_installs_it(pulumi_project):
    folder = pulumi_project(MISSING_PROVIDER)
    (folder / "requirements.txt").write_text("pulumi>=3\nPulumi-Tailnet_Offline-Absent>=0.17,<1  # vpn\n")
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert "/__main__.py:4: the program imports pulumi_tailnet_offline_absent," in message
    assert "requirements.txt lists Pulumi-Tailnet_Offline-Absent>=0.17,<1" in message
    assert "-m pip install 'Pulumi-Tailnet_Offline-Absent>=0.17,<1'" in message
    assert "ModuleNotFoundError" not in message


def test_plan_guesses_the_install_line_of_a_missing_package_no_requirements_list(pulumi_project):
    folder = pulumi_project("import pulumi\nimport pulumi_nowhere_offline\n")
    with pytest.raises(ProgramError, match=r"-m pip install 'pulumi-nowhere-offline'"):
        plan(folder, "dev")


def test_plan_says_an_installed_package_lacks_the_module_rather_than_install_it(pulumi_project):
    folder = pulumi_project("import pulumi\nimport pulumi_aws.no_such_module_offline\n")
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = str(caught.value)
    assert "which the installed pulumi_aws" in message
    assert "pip install" not in message
