"""What a machine runs at boot: its user data and startup scripts, decoded the way the node reads them.

EC2 instances, launch templates and launch configurations carry `userData` (plain or base64) or
`userDataBase64`; GCE instances, templates and TPU VMs a `metadataStartupScript`, or `metadata`
keys `startup-script` and `user-data`. Cloud-init user data may be gzip-compressed, a MIME
multipart archive, or a `#cloud-config` whose `write_files` carry more files (base64 and gzip
encodings included): `documents` opens all of it.
"""

from __future__ import annotations

import base64
import binascii
import email
import functools
import gzip
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from inference_infra.components import bounded_yaml

_USER_DATA_PROPS = ("userData", "userDataBase64")
_GCP_METADATA_KEYS = ("startup-script", "user-data")


def boot_texts(props: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(property path, text or UNKNOWN_VALUE) of every boot script or user data the props carry."""
    for key in _USER_DATA_PROPS:
        if key in props and props[key] is not None:
            yield key, props[key]
    if props.get("metadataStartupScript") is not None:
        yield "metadataStartupScript", props["metadataStartupScript"]
    metadata = props.get("metadata")
    if isinstance(metadata, Mapping):
        for key in _GCP_METADATA_KEYS:
            if key in metadata:
                yield f"metadata.{key}", metadata[key]


def _unwrapped(raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except OSError:
            return raw
    return raw


def decoded(text: str) -> str:
    """User data as the node reads it: base64 and gzip undone where present."""
    raw: bytes = text.encode()
    if not text.lstrip().startswith(("#", "Content-Type")):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raw = text.encode()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except OSError:
            return text
    return raw.decode("utf-8", errors="replace")


def documents(text: str, where: str) -> Iterator[tuple[str, str]]:
    """(where, text) of the decoded script and every document inside it: MIME parts
    (`<where> part 2`) and cloud-config write_files (`<where> write_files /etc/app.env`)."""
    script = decoded(text)
    yield where, script
    if script.lstrip().startswith("Content-Type: multipart"):
        message = email.message_from_string(script)
        for n, part in enumerate(message.walk()):
            if part.is_multipart():
                continue
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                inner = _unwrapped(payload).decode("utf-8", errors="replace")
                yield from _cloud_config_files(inner, f"{where} part {n}")
                yield f"{where} part {n}", inner
        return
    yield from _cloud_config_files(script, where)


@functools.lru_cache(maxsize=64)
def cloud_config(script: str) -> Any:
    """A `#cloud-config` script's document (None when it is not one or is not valid YAML), parsed
    once per distinct script: the plan's secret marking and several policies read the same user
    data. Read it, never change it."""
    if not script.startswith("#cloud-config"):
        return None
    try:
        return bounded_yaml.load(script)
    except yaml.YAMLError:
        return None


def _cloud_config_files(script: str, where: str) -> Iterator[tuple[str, str]]:
    document = cloud_config(script)
    files = document.get("write_files") if isinstance(document, Mapping) else None
    for item in files if isinstance(files, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
            continue
        content, encoding = item["content"], str(item.get("encoding") or "").lower()
        if encoding in ("b64", "base64", "gz+b64", "gzip+base64", "gz+base64", "gzip+b64"):
            try:
                content = _unwrapped(base64.b64decode(content)).decode("utf-8", errors="replace")
            except (binascii.Error, ValueError):
                continue
        yield f"{where} write_files {item.get('path') or '?'}", content
