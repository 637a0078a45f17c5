"""Plaintext secrets: token shapes, named high-entropy values, exemptions, boot scripts opened."""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import string
import time

import pytest

from inference_infra.components.resources.boot import documents
from inference_infra.components.resources.secrets import (
    Finding,
    entropy,
    exempt,
    is_plaintext_secret,
    scan_text,
    scan_tree,
    scan_value,
)

HF = "hf_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x"
OPENAI = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
RANDOM = "q8Zr2LmX4vT9cW1nB6kP3sY7"  # 24 characters, all distinct: log2(24) bits each


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (HF, "a Hugging Face token (hf_...)"),
        (OPENAI, "an OpenAI-style API key (sk-...)"),
        (AWS_KEY, "an AWS access key id"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=", "a private key"),
    ],
)
def test_secrets_finds_token_shapes_under_any_name(value, kind):
    assert scan_value("MODEL", value, "env[0]") == [Finding(kind, "env[0] (MODEL)")]


def test_secrets_finds_random_values_under_secret_like_names():
    assert entropy(RANDOM) >= 4.0
    for name in ("HF_TOKEN", "db_password", "apiKey", "API-KEY", "client_secret"):
        assert scan_value(name, RANDOM, "v") == [
            Finding("a high-entropy value under a secret-like name", f"v ({name})")
        ]
    assert scan_value("MODEL_NAME", RANDOM, "v") == []
    assert scan_value("TOKEN", "changeme-changeme-changeme", "v") == []  # 20+ characters, low entropy


@pytest.mark.parametrize(
    "value",
    [
        "sha256:" + "3f" * 32,
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
        "/run/secrets/hf_token_from_the_mounted_volume",
        "projects/acme/secrets/hf-token/versions/latest",
        "s3://acme-secrets/inference/tokens/hf-token.txt",
        "${HF_TOKEN_FROM_THE_ENVIRONMENT_OF_BOOT}",
        "{{ .Values.secrets.huggingFaceTokenName }}",
    ],
)
def test_secrets_exempts_digests_arns_paths_and_references(value):
    assert exempt(value)
    assert scan_value("HF_TOKEN", value, "v") == []


def test_secrets_rejects_base64_with_slashes_and_urls_with_credentials():
    assert not exempt("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY")  # an AWS secret access key's shape
    assert not exempt("https://user:s3cr3tPassw0rdXyz@registry.example.com/v2")


def test_secrets_scans_scripts_line_by_line_naming_the_variable_never_the_value():
    script = f"#!/bin/bash\nexport HF_TOKEN={HF}\nvllm serve --api-key {RANDOM}\necho done\n"
    found = scan_text(script, "userData")
    assert found == [
        Finding("a Hugging Face token (hf_...)", "userData line 2 (HF_TOKEN)"),
        Finding("a high-entropy value under a secret-like name", "userData line 3 (api-key)"),
    ]
    assert all(HF not in f.where and RANDOM not in f.where for f in found)


def test_secrets_opens_base64_gzip_mime_and_cloud_config_write_files():
    env_file = base64.b64encode(f"HF_TOKEN={HF}\n".encode()).decode()
    cloud_config = (
        f"#cloud-config\nwrite_files:\n- path: /etc/vllm.env\n  encoding: b64\n  content: {env_file}\n"
    )
    mime = (
        'Content-Type: multipart/mixed; boundary="b"\nMIME-Version: 1.0\n\n--b\n'
        "Content-Type: text/cloud-config\nContent-Transfer-Encoding: base64\n\n"
        f"{base64.b64encode(cloud_config.encode()).decode()}\n--b--\n"
    )
    packed = base64.b64encode(gzip.compress(mime.encode())).decode()
    wheres = [where for where, text in documents(packed, "userData") if scan_text(text, where)]
    assert wheres == ["userData part 1 write_files /etc/vllm.env"]
    assert is_plaintext_secret("userData", packed)


def test_secrets_judges_env_entries_and_json_documents_under_their_names():
    env = [{"name": "HF_TOKEN", "value": RANDOM}, {"name": "MODEL", "value": RANDOM}]
    assert scan_tree({"containers": [{"env": env}]}, "spec") == [
        Finding("a high-entropy value under a secret-like name", "spec.containers[0].env[0].value (HF_TOKEN)")
    ]
    definitions = json.dumps([{"name": "vllm", "environment": env}])
    assert is_plaintext_secret("containerDefinitions", definitions)
    assert not is_plaintext_secret(
        "containerDefinitions", json.dumps([{"name": "vllm", "environment": env[1:]}])
    )


# The assignment pattern before it was made linear (kept here as the reference its matches must equal).
_QUADRATIC_ASSIGNMENT = re.compile(
    r"""(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)["']?\s*(?:=|:(?!//))\s*["']?(?P<value>[^\s"'`;,]+)"""
)


@pytest.mark.parametrize(
    "line",
    [
        "export HF_TOKEN=abc",
        "9api_key=q8Zr2LmX4vT9cW1nB6kP3sY7",
        "--api-key=q8Zr2LmX4vT9cW1nB6kP3sY7 x.y-token: 'v' 1.2.3secret=z",
        '{"client_secret": "q8Zr2LmX4vT9cW1nB6kP3sY7", "url": "https://a/b"}',
        "a=b=c ;TOKEN = v, ..-_x:y  token_",
        "QUJD/ZGVm+token/R0hJ==",
    ],
)
def test_secrets_linear_assignment_pattern_matches_what_the_old_one_matched(line):
    from inference_infra.components.resources import secrets

    def found(pattern):
        return [(m.group("name"), m.group("value"), m.end()) for m in pattern.finditer(line)]

    assert found(secrets._ASSIGNMENT) == found(_QUADRATIC_ASSIGNMENT)


def _base64_lines(rng: random.Random, lines: int, length: int) -> str:
    """Long lines of letters and digits (a startup script's embedded base64) with a secret-like word
    inside, so the assignment search runs on every line instead of being skipped."""
    alphabet = string.ascii_letters + string.digits
    out = []
    for _ in range(lines):
        chunk = "".join(rng.choice(alphabet) for _ in range(length))
        middle = length // 2
        out.append(chunk[:middle] + "/token/" + chunk[middle:] + "==")
    return "\n".join(out) + "\n"


def test_secrets_scan_is_linear_in_the_length_of_a_line():
    """Ten times longer lines cost about ten times as much (the old pattern: 84 times, measured
    2026-12-02 on this input).

    CPU time, best of three, with a bound three times the linear ratio: the scan of 10,000
    characters in 1,000-character lines against 100,000 in 10,000-character lines."""
    from inference_infra.components.resources import secrets

    rng = random.Random(35)
    short, long = _base64_lines(rng, 10, 1_000), _base64_lines(rng, 10, 10_000)

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            secrets._text_hits.cache_clear()
            started = time.process_time()
            assert secrets.scan_text(text, "startup-script") == []
            best = min(best, time.process_time() - started)
        return max(best, 1e-6)

    assert cost(long) / cost(short) < 30


def test_secrets_scans_a_boot_script_once_for_the_plan_and_the_policy(monkeypatch):
    """The plan's secret marking and no-plaintext-secrets read the same startup script: the lines
    are scanned once, the second reader gets the kept result."""
    from inference_infra.components.resources import secrets
    from inference_infra.policy.rules import no_plaintext_secrets
    from inference_infra.policy.rules._base import Resource

    script = f"#!/bin/bash\nexport HF_TOKEN={HF}\necho {'QUJD' * 50}\n"
    scanned: list[str] = []
    shapes = secrets._shapes
    monkeypatch.setattr(secrets, "_shapes", lambda line: scanned.append(line) or shapes(line))
    secrets._text_hits.cache_clear()
    secrets._opened.cache_clear()

    assert is_plaintext_secret("metadataStartupScript", script)
    resource = Resource(
        type="gcp:compute/instance:Instance", name="vm", props={"metadataStartupScript": script}
    )
    outcome = no_plaintext_secrets.check(resource, {})
    assert "metadataStartupScript line 2 (HF_TOKEN)" in str(outcome)
    assert len(scanned) == 3  # three lines, each once
