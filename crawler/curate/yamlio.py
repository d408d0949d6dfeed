"""Curated files as YAML: multi-line text as literal blocks, bidi controls and raw line breaks double-quoted as escapes."""

from __future__ import annotations

import re
from typing import Any

import yaml

from crawler.base.sink import BIDI, BIDI_CHARS

# --------------------------------------------------------------------------- editing files


def _block_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # literal blocks for multi-line text (code); PyYAML falls back to quoting when a block
    # could not round-trip the string exactly (e.g. trailing spaces). Text with bidi controls or
    # the line breaks PyYAML writes raw (U+0085, U+2028, U+2029: read back as breaks, so folded)
    # is double-quoted, where they are escapes (see ``dump_yaml``).
    style = '"' if _QUOTED.search(data) else "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_QUOTED = re.compile(f"[\x85\u2028\u2029{BIDI_CHARS}]")


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(str, _block_str)


def dump_yaml(data: dict[str, Any]) -> str:
    """YAML a curator reads and a reviewer diffs: PyYAML escapes controls itself but writes bidi
    controls raw, which would reorder what they see (Trojan Source); here they are escapes."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
    return BIDI.sub(lambda m: f"\\u{ord(m.group()):04X}", text)
