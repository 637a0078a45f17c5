"""`make generate` (docs/generate.py) writes every generated file: the catalog's generated tables,
infra/config.schema.json and docs/reference.md's generated sections. A stale one fails here."""

from __future__ import annotations

import json

from tests.docs.test_reference import _generator


def test_generate_every_generated_file_is_current() -> None:
    assert _generator().stale() == [], "run `make generate`"


def test_generate_check_names_each_stale_file_and_fails(tmp_path, monkeypatch, capsys) -> None:
    generate = _generator()
    schema = tmp_path / "config.schema.json"
    schema.write_text(json.dumps({"stale": True}))
    reference = tmp_path / "reference.md"
    text = generate.REFERENCE.read_text(encoding="utf-8")
    reference.write_text(text.replace("| `GpuIdle` |", "| `GpuIdleRenamed` |", 1), encoding="utf-8")
    monkeypatch.setattr(generate, "SCHEMA", schema)
    monkeypatch.setattr(generate, "REFERENCE", reference)
    assert generate.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "config.schema.json is stale: run `make generate`" in err
    assert "reference.md is stale: run `make generate`" in err
    assert generate.main([]) == 0  # rewrites both copies
    assert generate.stale() == []
    assert reference.read_text(encoding="utf-8") == text


def test_generate_rejects_unknown_arguments(capsys) -> None:
    assert _generator().main(["--write"]) == 2
    assert "usage" in capsys.readouterr().err
