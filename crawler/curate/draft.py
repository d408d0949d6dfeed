"""``errcat curate draft``: one entry's draft, from the facts or by a model, never over a reviewed file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from crawler.base.errors import UsageError
from crawler.catalogue.curated import CuratedError, parse_file
from crawler.curate.check import dataset_with
from crawler.curate.edit import _file, review_for, write_text_atomic
from crawler.curate.llm import Endpoint, LLMFailure
from crawler.curate.yamlio import dump_yaml
from crawler.model.records import CuratedFile

# --------------------------------------------------------------------------- drafts

_FIELD_VALIDATOR = re.compile(r"""^(?:\w+\.)*field_validator\(\s*['"]([^'"]+)['"]""")
_MODEL_VALIDATOR = re.compile(r"^(?:\w+\.)*model_validator\b")


def draft_from_facts(record: dict[str, Any], commit: str) -> CuratedFile:
    """A draft written from machine-derived facts only: for a curator to rewrite, not to ship."""
    exc = record["exception"]
    facts = record["sites"][0]["facts"]
    loc = record["location"]
    qualname = loc["qualname"]
    cls = qualname.split(".")[0] if "." in qualname else None
    ancestor = exc.get("builtin_ancestor")
    kind = f"{exc['name']} (a {ancestor})" if ancestor and ancestor != exc["name"] else exc["name"]
    guards = [" ".join(g.split()) for g in facts["guards"]]  # one line each in prose and code
    condition = " and ".join(f"`{g}`" for g in guards)
    situations = []
    for deco in facts["decorators"]:
        if m := _FIELD_VALIDATOR.match(deco):
            situations.append(f"Validating the `{m.group(1)}` field of `{cls}`: pydantic reports it wrapped in a ValidationError.")
        elif _MODEL_VALIDATOR.match(deco):
            situations.append(f"Validating `{cls}` as a whole (a model validator): pydantic reports it wrapped in a ValidationError.")
    for loop in facts["loops"]:
        situations.append(f"For an item of `{loop}`.")
    if facts.get("handler"):
        situations.append(f"While handling `{facts['handler']}`" + (f", chained from `{facts['cause']}`." if facts.get("cause") else "."))
    what = f"{kind} raised by `{qualname}` in `{loc['path']}`"
    what += f" when {condition}." if guards else "."
    if facts.get("docstring"):
        what += f" The function's purpose: {facts['docstring']}"
    catch = ancestor or exc["name"]
    patterns = [{"strategy": f"Catch {catch}", "code": f"try:\n    ...  # the call that reaches {qualname}\nexcept {catch} as exc:\n    ...  # report str(exc) to the user\n"}]
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


def draft(root: Path, data: Path, entry_id: str, endpoint: Endpoint | None = None, model: str | None = None,
          repo: str | None = None, cache_dir: Path | None = None) -> Path:
    """Write ``<id>.yaml`` as a draft (from the facts, or by ``endpoint``'s model, checked like
    ``draft --all``'s: no invented names); never over a reviewed or retired file."""
    from crawler.curate.draft_all import draft_one, render, vocabulary_of

    ds = dataset_with(data, entry_id)
    path = _file(root, ds, entry_id)
    if path.exists():
        try:
            existing = parse_file(path)
        except CuratedError:
            raise UsageError(f"{path} exists and is not valid; fix or remove it by hand") from None
        if existing.review.status != "draft":
            raise UsageError(f"{path} is {existing.review.status}; a draft never overwrites it")
    record = ds.by_id[entry_id].model_dump(mode="json")
    if endpoint is None:
        body = draft_from_facts(record, ds.commit).model_dump(mode="json", exclude_none=True)
        header = f"# Draft for {record['title']!r}: rewrite it, check it against the code, then `errcat curate review {entry_id}`.\n"
        write_text_atomic(path, header + dump_yaml(body))
        return path
    try:
        model = model or endpoint.first_model()
        vocabulary = vocabulary_of(repo, ds.manifest.commit, ds.manifest.repo, cache_dir)
        entry = draft_one(record, ds.commit, endpoint, model, vocabulary)
    except LLMFailure as failure:
        raise UsageError(f"--llm {endpoint.base}: {failure.reason}") from None
    write_text_atomic(path, render(entry, record["title"]))
    return path
