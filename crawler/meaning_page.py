"""The derived meaning on a page: terminal, HTML and Markdown, under "Derived from the code".

Sentences quote code between backticks (``crawler.phrasing`` keeps backticks out of the code
itself), so each page splits on them: prose is escaped as prose, code as code.
"""

from __future__ import annotations

from typing import Any, Callable

TITLE = "Derived from the code"
NOTE = "Read by errcat from the code at this commit, not written by a person; it may be incomplete."


def knob_text(knob: dict[str, Any]) -> str:
    """One setting in a sentence's notation: `` `--flag` (`-f`), field `x` of `Owner` ``."""
    text = f"`{knob['name']}`"
    others = [f for f in knob.get("flags") or [] if f != knob["name"]]
    if others:
        text += " (" + ", ".join(f"`{f}`" for f in others) + ")"
    if knob.get("owner") and knob.get("field") and knob["field"] != knob["name"]:
        text += f", field `{knob['field']}` of `{knob['owner'].rpartition('.')[2]}`"
    elif knob.get("owner"):
        text += f" of `{knob['owner'].rpartition('.')[2]}`"
    kind = {"cli_flag": "command-line option", "config_field": "config field", "request_param": "request parameter",
            "env_var": "environment variable", "message_name": "named in the message"}.get(knob["kind"], knob["kind"])
    return f"{text} ({kind})"


def rows(meaning: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, sentence) pairs, in page order; none when nothing was derived."""
    if not meaning:
        return []
    out = []
    if meaning.get("trigger"):
        out.append(("When it is raised", meaning["trigger"]))
    for knob in meaning.get("knobs") or []:
        out.append(("Setting", knob_text({**knob, "name": knob["name"].replace("`", "'"),
                                          "flags": [f.replace("`", "'") for f in knob.get("flags") or []]})))
    if meaning.get("fix"):
        out.append(("Fix direction", meaning["fix"]))
    return out


def split_code(sentence: str, prose: Callable[[str], str], code: Callable[[str], str]) -> str:
    """The sentence with its prose through ``prose`` and its backticked code through ``code``."""
    parts = sentence.split("`")
    if len(parts) % 2 == 0:  # an odd backtick: no code can be told apart, all of it is prose
        return prose(sentence)
    return "".join(code(p) if i % 2 else prose(p) for i, p in enumerate(parts))
