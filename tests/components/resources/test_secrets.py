"""Plaintext secrets: token shapes, named high-entropy values, exemptions, boot scripts opened."""

from __future__ import annotations

import base64
import gzip
import json

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
