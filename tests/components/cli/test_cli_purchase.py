"""`--purchase` (size, simulate) speaks the fleets' capacity modes and prices each one."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from inference_infra.components.cli import main
from inference_infra.components.fleet.capacity import mode_values

SIZE = ["size", "--model", "llama-3.1-8b", "--context", "4096", "--concurrency", "8", "--json"]


@pytest.mark.parametrize("command", ["size", "simulate"])
def test_cli_purchase_choices_are_the_capacity_modes(command):
    from inference_infra.components import cli

    __import__(f"inference_infra.components.cli.{command}")
    option = next(p for p in cli.app.commands[command].params if p.name == "purchase")
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == mode_values()


def test_cli_purchase_preemptible_is_priced_as_spot(capsys):
    prices = {}
    for purchase in ("spot", "preemptible"):
        assert main([*SIZE, "--cloud", "gcp", "--purchase", purchase]) == 0
        options = json.loads(capsys.readouterr().out)["options"]
        prices[purchase] = [(o["instance_type"], o["hourly_usd"]) for o in options]
    assert prices["preemptible"] == prices["spot"]


def test_cli_purchase_rejects_a_word_outside_the_modes(capsys):
    assert main([*SIZE, "--purchase", "capacity-block"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'capacity-block' is not one of 'reserved', 'spot', 'on-demand', 'preemptible'" in err


def test_cli_commands_load_no_fleet_package_when_imported():
    """The choices are read when click needs them: importing a command stays light."""
    code = (
        "import sys, inference_infra.components.cli.size, inference_infra.components.cli.simulate; "
        "print('inference_infra.components.fleet' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"
