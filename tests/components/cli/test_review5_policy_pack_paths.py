"""Review 5: `policy-pack init DIR` prints shell commands to paste; DIR is quoted in them, so a folder
with a space, '$(...)' or a newline gives commands that act on that folder and nothing else."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from inference_infra.components.cli import main


@pytest.mark.parametrize("name", ["my packs", "pack$(touch pwned)", "pack`id`", "it's", "pol\nicy"])
def test_policy_pack_init_prints_commands_with_the_folder_quoted(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["policy-pack", "init", name]) == 0
    err = capsys.readouterr().err
    venv_command = re.search(r"`(python3 -m venv .*?)`; then", err, re.S)
    assert venv_command
    words = shlex.split(venv_command.group(1))
    assert words[:4] == ["python3", "-m", "venv", f"{name}/venv"]
    assert words[4] == "&&"
    assert words[5:] == [f"{name}/venv/bin/pip", "install", "-r", f"{name}/requirements.txt"]
    # bash reads the preview command back to the same folder, with nothing run on the way.
    preview = re.search(r"`(pulumi preview --policy-pack .*?)` \(one", err, re.S).group(1)
    done = subprocess.run(
        ["bash", "-c", f"set -- {preview}; printf '%s' \"$4\""], capture_output=True, text=True
    )
    assert done.stdout == name
    assert not (tmp_path / "pwned").exists()
