"""A curated file drafted from the machine-derived facts alone (guards, loops, handler,
decorators, docstring): the start a curator rewrites, and the base a model's draft fills in."""

from __future__ import annotations

import ast
import re
from typing import Any

from crawler.catalogue.phrasing import parse_guard
from crawler.curate.reviews import review_for
from crawler.model.kinds import exception_qualname, exception_word
from crawler.model.records import CuratedFile

_FIELD_VALIDATOR = re.compile(r"""^(?:\w+\.)*field_validator\(\s*['"]([^'"]+)['"]""")
_MODEL_VALIDATOR = re.compile(r"^(?:\w+\.)*model_validator\b")


def draft_from_facts(record: dict[str, Any], commit: str) -> CuratedFile:
    """A draft written from machine-derived facts only: for a curator to rewrite, not to ship."""
    exc = record["exception"] or {"name": exception_word(record), "qualname": exception_qualname(record)}  # (a log, a response)
    facts = record["sites"][0]["facts"]
    loc = record["location"]
    qualname = loc["qualname"]
    cls = qualname.split(".")[0] if "." in qualname else None
    ancestor = exc.get("builtin_ancestor")
    article = "an" if ancestor and ancestor[0] in "AEIOU" else "a"
    kind = f"{exc['name']} ({article} {ancestor})" if ancestor and ancestor != exc["name"] else exc["name"]
    guards = [" ".join(_as_read(g).split()) for g in facts["guards"]]  # one line each in prose and code
    condition = " and ".join(f"`{g}`" for g in guards)
    situations = []
    for deco in facts["decorators"]:
        if m := _FIELD_VALIDATOR.match(deco):
            situations.append(f"Validating the `{m.group(1)}` field of `{cls}`: pydantic reports it wrapped in a ValidationError.")
        elif _MODEL_VALIDATOR.match(deco):
            situations.append(f"Validating `{cls}` as a whole (a model validator): pydantic reports it wrapped in a ValidationError.")
    for loop in facts["loops"]:
        if loop.startswith("else: "):  # (a ``for`` loop's ``else``: see the visitor)
            situations.append(f"After `{loop[len('else: ') :]}` ran to its end (no `break`).")
        else:
            situations.append(f"For an item of `{loop}`.")
    if facts.get("handler"):
        situations.append(f"While handling `{facts['handler']}`" + (f", chained from `{facts['cause']}`." if facts.get("cause") else "."))
    what = f"{kind} raised by `{qualname}` in `{loc['path']}`"
    what += f" when {condition}." if guards else "."
    if facts.get("docstring"):
        what += f" The function's purpose: {facts['docstring']}"
    # the builtin a caller can catch without an import, unless that is every error there is
    catch = ancestor if ancestor and ancestor not in ("Exception", "BaseException") else exc["name"]
    patterns = [
        {
            "strategy": f"Catch {catch}",
            "code": f"try:\n    ...  # the call that reaches {qualname}\nexcept {catch} as exc:\n    ...  # report str(exc) to the user\n",
        }
    ]
    if guards:
        patterns.insert(0, {"strategy": "Validate before calling", "code": f"if {guards[-1]}:\n    ...  # fix the input before it reaches {qualname}\n"})
    return CuratedFile(
        id=record["id"],
        what_it_means=what,
        when_it_happens={"trigger": f"{condition} holds" if guards else f"`{qualname}` is reached", "common_situations": situations},
        solutions=[f"Change the input so that {condition} no longer holds." if guards else "Avoid the code path that reaches it."],
        defensive_patterns=patterns,
        related=[r["id"] for r in record.get("related", []) if r.get("reason") != "curated"],
        review=review_for(record, commit, "draft"),
    )


def _as_read(guard: str) -> str:
    """A recorded guard as a reader takes it (``not (not token_ids)`` is ``token_ids``, ``not (x <
    0)`` is ``x >= 0``); one that does not parse as it is. The review keeps the recorded form."""
    tree = parse_guard(guard)
    return ast.unparse(tree) if tree is not None else guard
