"""Plaintext secrets in what a resource hands to a machine or a container.

Two kinds of finding, neither of which ever carries the value itself:

- a token of a known shape anywhere: a Hugging Face token (`hf_` + 30 or more letters and digits),
  an OpenAI-style key (`sk-` + 20 or more), an AWS access key id (`AKIA`/`ASIA`/... + 16), a private
  key block (`-----BEGIN ... PRIVATE KEY-----`);
- a value of 20 characters or more with a Shannon entropy of at least 4 bits per character, under a
  name matching `token|secret|password|api[_-]?key` (an environment variable, a YAML/JSON key, a shell
  assignment, a command-line option, an SSM parameter's name). SHA-256 digests, ARNs, paths and
  references (`${VAR}`, `$(cmd)`, `{{ .Values.x }}`) are not secrets.

`scan_text` reads free text (user data, startup scripts, files they write) line by line;
`scan_boot` opens a boot script first (`boot.documents`); `scan_value` reads one named value (an
environment variable, a Helm value, a parameter).

The scan is linear in its input (a GCP startup script carries 22,000-character base64 lines): an
assignment's name starts only where a run of name characters starts and never gives characters back,
and a line with no secret-like name anywhere is not searched for assignments at all. What a text
holds is computed once per distinct text (`_text_hits`, `_opened`) and shared by the plan, which
marks secrets, and by the `no-plaintext-secrets` policy, which reports them.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inference_infra.components.images import SHA256_HEX
from inference_infra.components.resources.boot import documents

MIN_LENGTH = 20
MIN_ENTROPY_BITS = 4.0
SECRET_NAME = re.compile(r"token|secret|password|api[_-]?key", re.IGNORECASE)

TOKEN_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a Hugging Face token (hf_...)", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}")),
    (
        "an OpenAI-style API key (sk-...)",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ),
    (
        "an AWS access key id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Z0-9])"
        ),
    ),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
)
# name = value, name: value, "name": "value", export NAME=value, --name value, --name=value.
# The name starts where a run of name characters starts (after any leading digits, dots and dashes)
# and takes the whole run (possessive): a name is always followed by a quote, a space, `=` or `:`,
# none of which is a name character, so no shorter name and no later start in the same run could
# match. That is what keeps a 22,000-character base64 line linear instead of quadratic.
_ASSIGNMENT = re.compile(
    r"""(?<![A-Za-z0-9_.-])[0-9.-]*+(?P<name>[A-Za-z_][A-Za-z0-9_.-]*+)["']?\s*(?:=|:(?!//))\s*["']?"""
    r"""(?P<value>[^\s"'`;,]++)"""
)
_OPTION = re.compile(r"(?<!\S)--(?P<name>[A-Za-z0-9][A-Za-z0-9_-]*+)(?:=|\s+)[\"']?(?P<value>[^\s\"'`;,]++)")
_DIGEST = re.compile(rf"^(sha256:)?{SHA256_HEX}$", re.IGNORECASE)
_REFERENCE = re.compile(r"^(\$\{.*\}|\$\(.*\)|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|<[^>]*>)$")
# Paths: absolute or explicitly relative, URLs (s3://, gs://, https://) without credentials in them,
# and Google resource names (projects/p/secrets/hf-token/versions/latest). A bare a/b/c is not one:
# base64 (an AWS secret access key) has slashes too.
_PATH = re.compile(
    r"^(/|\./|\.\./|~/|(projects|organizations|folders|locations)/|[A-Za-z][A-Za-z0-9+.-]*://)"
)
_URL_CREDENTIALS = re.compile(r"://[^/@\s]+:[^/@\s]+@")


@dataclass(frozen=True)
class Finding:
    """A plaintext secret: what it looks like and where it sits (never the value)."""

    kind: str
    where: str


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0


def exempt(value: str) -> bool:
    """A SHA-256 digest, an ARN, a path (or URL) or a reference to another value is not a secret."""
    return (
        _DIGEST.fullmatch(value) is not None
        or value.startswith("arn:")
        or (_PATH.match(value) is not None and _URL_CREDENTIALS.search(value) is None)
        or _REFERENCE.fullmatch(value) is not None
    )


def looks_random(value: str) -> bool:
    """20 characters or more, at least 4 bits of entropy per character, and not exempt."""
    return len(value) >= MIN_LENGTH and entropy(value) >= MIN_ENTROPY_BITS and not exempt(value)


def _shapes(text: str) -> Iterator[str]:
    for kind, pattern in TOKEN_SHAPES:
        if pattern.search(text):
            yield kind


def scan_value(name: Any, value: Any, where: str) -> list[Finding]:
    """One named value: a token of a known shape, or a random-looking value under a secret-like name."""
    if not isinstance(value, str) or not value:
        return []
    label = f"{where} ({name})" if isinstance(name, str) and name and name not in where else where
    found = [Finding(kind, label) for kind in _shapes(value)]
    if not found and isinstance(name, str) and SECRET_NAME.search(name) and looks_random(value.strip()):
        found.append(Finding("a high-entropy value under a secret-like name", label))
    return found


def _named(line: str) -> Iterator[str]:
    """Names of the assignments and options in one line whose name is secret-like and whose value
    looks random. A line with no secret-like name anywhere has none (and is not searched)."""
    if SECRET_NAME.search(line) is None:
        return
    for pattern in (_ASSIGNMENT, _OPTION):
        for m in pattern.finditer(line):
            if SECRET_NAME.search(m.group("name")) and looks_random(m.group("value")):
                yield m.group("name")


# (line number, token kinds, first secret-like name or None) of every line with a finding
_Hits = tuple[tuple[int, tuple[str, ...], str | None], ...]


@functools.lru_cache(maxsize=1024)
def _text_hits(text: str) -> _Hits:
    """One pass over a text, kept per distinct text: the plan and the policy read the same scripts."""
    hits = []
    for number, line in enumerate(text.splitlines(), start=1):
        kinds = tuple(_shapes(line))
        name = next(_named(line), None)
        if kinds or name is not None:
            hits.append((number, kinds, name))
    return tuple(hits)


def scan_text(text: str, where: str) -> list[Finding]:
    """Free text, line by line: tokens of a known shape, and assignments or options with a secret-like
    name and a random-looking value. Findings name the line (and the variable), never the value."""
    found: list[Finding] = []
    for number, kinds, name in _text_hits(text):
        at = f"{where} line {number}"
        named = f"{at} ({name})" if name is not None else at
        found += [Finding(kind, named) for kind in kinds]
        if not kinds:
            found.append(Finding("a high-entropy value under a secret-like name", named))
    return found


@functools.lru_cache(maxsize=256)
def _opened(text: str) -> tuple[tuple[str, str], ...]:
    """(where suffix, document) of a boot script opened (`boot.documents`), kept per distinct text."""
    return tuple(documents(text, ""))


def scan_boot(text: str, where: str) -> list[Finding]:
    """A boot script (user data, a startup script) decoded and opened, every document scanned as text:
    findings name the part or file (`userData part 2 line 3 (HF_TOKEN)`)."""
    return [finding for suffix, doc in _opened(text) for finding in scan_text(doc, where + suffix)]


def scan_tree(value: Any, where: str, name: str | None = None) -> list[Finding]:
    """Every string in nested values (Helm values, a container definition), each under its key; a
    `{name, value}` entry (an environment variable) judges the value under its name."""
    found: list[Finding] = []
    if (
        isinstance(value, Mapping)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("value"), str)
    ):
        found += scan_value(value["name"], value["value"], f"{where}.value")
        value = {k: v for k, v in value.items() if k != "value"}
    if isinstance(value, Mapping):
        for key, child in value.items():
            found += scan_tree(child, f"{where}.{key}", str(key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += scan_tree(child, f"{where}[{i}]", name)
    elif isinstance(value, str):
        if "\n" in value:
            found += scan_text(value, where)
        else:
            found += scan_value(name, value, where)
    return found


def env_findings(entries: Any, where: str) -> list[Finding]:
    """Container environment as a list of {name, value} (Kubernetes, ECS, Batch, Cloud Run) or a mapping."""
    found: list[Finding] = []
    if isinstance(entries, Mapping):
        for key, value in entries.items():
            found += scan_value(str(key), value, f"{where}.{key}")
    elif isinstance(entries, list):
        for i, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                found += scan_value(entry.get("name"), entry.get("value"), f"{where}[{i}]")
    return found


BOOT_KEYS = frozenset({"userData", "userDataBase64", "metadataStartupScript", "startup-script", "user-data"})


def is_plaintext_secret(name: str | None, text: str) -> bool:
    """Whether one string, found under `name`, holds a plaintext secret: a boot script (decoded, with
    the files it writes), a JSON document (container definitions), or a named value or free text."""
    if not text:
        return False
    if name in BOOT_KEYS:
        return any(_text_hits(doc) for _, doc in _opened(text))
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if parsed is not None:
            return bool(scan_tree(parsed, ""))
    if "\n" in text:
        return bool(scan_text(text, ""))
    return bool(scan_value(name, text, ""))
