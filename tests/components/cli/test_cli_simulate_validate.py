"""`simulate --tune --validate TRACE`: the picks replayed on another trace; its flags' errors exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.components.cli.test_cli_simulate import FLAGS, flat, run


def _trace(path, step_at: float | None):
    """Twenty minutes at 2 requests a second; from `step_at` on, 8 a second (four times the load)."""
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    t = 0.0
    while t < 1200:
        lines.append(f"{t:.3f},1000,150")
        t += 0.125 if step_at is not None and t >= step_at else 0.5
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def calm(tmp_path):
    return _trace(tmp_path / "calm.csv", None)


@pytest.fixture
def stepped(tmp_path):
    return _trace(tmp_path / "step.csv", 600)


def test_simulate_tune_validate_replays_the_picks_on_the_other_trace(capsys, calm, stepped):
    code, out, err = run(
        capsys, "simulate", "--trace", str(calm), *FLAGS, "--tune", "--validate", str(stepped), "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["found"] is True
    assert set(doc["robust"]) == {"found", "point", "checked", "candidates", "bound", "neighbours"}
    validation = doc["validation"]
    assert validation["trace"] == str(stepped)
    assert validation["requests"] == 1200 + 4800
    assert set(validation["settings"]) == {"best", "robust", "start"}
    best = validation["settings"]["best"]
    # what the calm trace rewarded does not hold a fourfold step faster than a cold start
    assert best["min_size"] == doc["best"]["min_size"]
    assert best["tuned_miss_share"] == doc["best"]["miss_share"] <= 0.01
    assert best["meets_slo"] is False
    assert best["miss_share"] > 0.01
    assert best["elastic_over_oracle"] == pytest.approx(best["cost_usd"] / validation["oracle_usd"], rel=1e-3)


def test_simulate_tune_validate_table_says_which_picks_keep_the_slo(capsys, calm, stepped):
    code, out, err = run(
        capsys, "simulate", "--trace", str(calm), *FLAGS, "--tune", "--validate", str(stepped)
    )
    assert code == 0, err
    text = flat(out)
    assert f"validated on {stepped} (6,000 requests;" in text
    assert "best $" in text
    assert "SLO NOT MET (tuned: 0.00% missed" in text
    assert "robust pick" in text


def test_simulate_validate_scale_defaults_to_the_runs_scale(capsys, calm, stepped):
    argv = ["simulate", "--trace", str(calm), *FLAGS, "--tune", "--validate", str(stepped), "--json"]
    code, out, err = run(capsys, *argv, "--scale", "2")
    assert code == 0, err
    assert json.loads(out)["validation"]["requests"] == 2 * 6000
    code, out, err = run(capsys, *argv, "--scale", "2", "--validate-scale", "1")
    assert code == 0, err
    assert json.loads(out)["validation"]["requests"] == 6000


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--validate", "{missing}"],
            "--validate '{missing}' replays what --tune finds on another trace: add --tune",
        ),
        (
            ["--tune", "--validate-scale", "2"],
            "--validate-scale 2 scales --validate's trace: add --validate TRACE",
        ),
        (
            ["--tune", "--validate", "{calm}", "--validate-scale", "0"],
            "--validate-scale 0 must be a whole number of at least 1",
        ),
        (["--tune", "--validate", "{missing}"], "--validate '{missing}' cannot be read"),
        (
            ["--tune", "--validate", "{bad}"],
            "--validate '{bad}' line 3: ContextTokens 'many' must be a whole number",
        ),
    ],
)
def test_simulate_validate_rejects_bad_input_with_exit_2(capsys, calm, tmp_path, extra, message):
    names = {"missing": str(tmp_path / "missing.csv"), "calm": str(calm), "bad": str(tmp_path / "bad.csv")}
    (tmp_path / "bad.csv").write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,10\n1,many,10\n")
    argv = [a.format(**names) for a in extra]
    code, out, err = run(capsys, "simulate", "--trace", str(calm), *FLAGS, *argv)
    assert code == 2
    assert out == ""
    assert message.format(**names) in flat(err)
    assert "Traceback" not in err


def test_simulate_tune_plot_marks_the_robust_pick(capsys, calm, tmp_path):
    plot = tmp_path / "frontier.svg"
    code, out, err = run(
        capsys, "simulate", "--trace", str(calm), *FLAGS, "--tune", "--json", "--plot", str(plot)
    )
    assert code == 0, err
    robust = json.loads(out)["robust"]["point"]
    assert robust is not None
    circles = {
        c.find("{http://www.w3.org/2000/svg}title").text: c
        for c in ET.parse(plot).getroot().iter("{http://www.w3.org/2000/svg}circle")
    }
    assert set(circles) == {"chosen", "robust pick", "pool's own"}
