"""What may reach a systemd unit, a shell or docker, and how it is written there (pure).

Two layers, both always on:

- **Allow-lists.** Every string a user, a stack file or a checkpoint's config.json chooses (served model
  names, S3 prefixes, directory and fleet names) is checked against a strict pattern before anything is
  rendered; a refusal is a Problem (one paragraph, exit 2), never a silent fix.
- **Quoting.** Whatever is rendered is quoted for the reader that parses it: `systemd_exec` for
  `ExecStart=` lines (specifiers `%` and variables `$` doubled, words with other characters in double
  quotes, C escapes for `\\` and `"`), `systemd_value` for plain settings such as `Description=`, and
  `shlex.quote` for bash. Control characters are refused by both: no quoting makes a newline safe in a
  line-based unit file.

Words that must keep a specifier or variable on purpose (`%i`, `${ENGINE_PORT}`) are marked
`Template(...)`; everything else is escaped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

# A served model name: a preset or a Hugging Face id ("org/name"), as `--served-model-name` and unit
# descriptions carry it. Segments start with a letter or digit, so '.', '..' and '-flag' cannot occur.
SERVED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95}){0,2}$")
SERVED_NAME_RULE = (
    "must be 1-3 '/'-separated segments of letters, digits, '.', '_' or '-', each starting with a letter "
    "or digit (a Hugging Face id such as meta-llama/Llama-3.1-8B-Instruct): no spaces, quotes, '%', '$', "
    "'*', '..' or control characters"
)
# An object key prefix or a folder below one: the same segments, any depth.
KEY_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=+-]{0,127}(/[A-Za-z0-9][A-Za-z0-9._=+-]{0,127}){0,15}$")
KEY_PREFIX_RULE = (
    "must be '/'-separated segments of letters, digits, '.', '_', '=', '+' or '-', each starting with a "
    "letter or digit, without a leading '/': no spaces, '*', '?', '[', '%', '$', quotes, '..' or control "
    "characters"
)
# A name used in unit arguments and metric dimensions (fleet names, directories under the cache).
PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
PLAIN_NAME_RULE = "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit"
# An absolute path on the node.
ABSOLUTE_PATH = re.compile(r"^(/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}){1,16}$")
ABSOLUTE_PATH_RULE = (
    "must be an absolute path of segments of letters, digits, '.', '_' or '-' (no '..', spaces or quotes)"
)

# Characters a systemd command-line word may hold without quotes (after % and $ are doubled).
_BARE = re.compile(r"^[A-Za-z0-9_@%+=:,./${}\[\]-]+$")


class Template(str):
    """A unit word that keeps its systemd specifiers (%i) and ${VARIABLES} on purpose."""

    __slots__ = ()


def served_name_ok(name: str) -> bool:
    return isinstance(name, str) and SERVED_NAME.fullmatch(name) is not None and ".." not in name


def key_prefix_ok(prefix: str) -> bool:
    return (
        isinstance(prefix, str) and KEY_PREFIX.fullmatch(prefix) is not None and ".." not in prefix.split("/")
    )


def plain_name_ok(name: str) -> bool:
    return isinstance(name, str) and PLAIN_NAME.fullmatch(name) is not None and name not in (".", "..")


def absolute_path_ok(path: str) -> bool:
    return (
        isinstance(path, str)
        and ABSOLUTE_PATH.fullmatch(path) is not None
        and not any(s in (".", "..") for s in path.split("/"))
    )


def _unwritable(c: str) -> bool:
    """Control characters, line separators, and what systemd does not take as UTF-8 (noncharacters)."""
    code = ord(c)
    return (
        code < 0x20
        or 0x7F <= code < 0xA0
        or c in "\u2028\u2029"
        or 0xD800 <= code <= 0xDFFF
        or 0xFDD0 <= code <= 0xFDEF
        or (code & 0xFFFE) == 0xFFFE
    )


def _refuse_control(text: str, where: str) -> None:
    if any(_unwritable(c) for c in text):
        raise ValueError(f"{where} {text!r} holds control characters; it cannot be written into a unit")


def systemd_word(word: str) -> str:
    """One word of an ExecStart= line: `%` and `$` doubled unless it is a Template, quoted when needed."""
    _refuse_control(word, "unit word")
    if word == ";":
        raise ValueError("a lone ';' separates commands in an ExecStart= line; it cannot be a word")
    if not isinstance(word, Template):
        word = word.replace("%", "%%").replace("$", "$$")
    if word and _BARE.fullmatch(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_exec(words: Iterable[str]) -> str:
    """An ExecStart=/ExecStartPre= command line from words (see systemd_word)."""
    return " ".join(systemd_word(w) for w in words)


def systemd_value(text: str) -> str:
    """A plain setting's value (Description=, ...): specifiers doubled; no control characters and no
    trailing backslash (which would continue the line)."""
    _refuse_control(text, "unit value")
    if text.endswith("\\"):
        raise ValueError(f"unit value {text!r} ends with a backslash (a line continuation)")
    return text.replace("%", "%%")


def shell_word(text: str) -> str:
    """One bash word (single-quoted when it needs to be); control characters refused."""
    _refuse_control(text, "shell word")
    return shlex.quote(text)


def shell_join(words: Iterable[str]) -> str:
    return " ".join(shell_word(w) for w in words)
