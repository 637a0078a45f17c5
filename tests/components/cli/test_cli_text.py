"""CLI messages a person can copy: no key, flag or path is ever broken across lines."""

from __future__ import annotations

import pytest

from inference_infra.components.cli import _paragraph
from inference_infra.components.cli.text import wrap

TOKENS = [
    "inference-infra:awsGpuFleets[0].reservation.instanceCount",
    "--kv-quant",
    "/tmp/pytest-of-root/pytest-42/test_user_project_with_own_pac0/user/__main__.py:7",
    "meta-llama/Llama-3.1-70B-Instruct",
]


@pytest.mark.parametrize("offset", range(0, 100, 7))
def test_paragraph_never_splits_a_token(offset):
    message = "x " * offset + " and then ".join(TOKENS) + " is not allowed."
    lines = _paragraph(message).splitlines()
    words = {w for line in lines for w in line.split()}
    for token in TOKENS:
        assert token in words, (token, lines)


def test_wrap_keeps_an_overlong_token_whole_on_its_own_line():
    token = "inference-infra:" + "a" * 150
    lines = wrap(f"the key {token} is unknown", width=40)
    assert token in lines


def test_paragraph_is_one_paragraph_with_the_prefix():
    text = _paragraph("bad input: " + " ".join(["word"] * 60))
    assert text.startswith("inference-infra: bad input:")
    assert text.endswith("\n")
    assert "\n\n" not in text
    assert all(len(line) <= 100 for line in text.splitlines())
