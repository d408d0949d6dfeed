"""draft: split from the former ``curate`` module."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from crawler.base.errors import UsageError
from crawler.catalogue.curated import CuratedError, parse_file
from crawler.curate.check import dataset_with
from crawler.curate.edit import _file, review_for, write_text_atomic
from crawler.curate.yamlio import dump_yaml
from crawler.model.records import CuratedFile, Explanation

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


_PROMPT = """You explain one error of the Python project {repo} for its error catalogue.
Answer with one JSON object and nothing else, with exactly these keys:
  what_it_means (string), when_it_happens ({{"trigger": string, "common_situations": [string]}}),
  solutions ([string]), example_fix ({{"before": code string, "after": code string}}),
  defensive_patterns ([{{"strategy": string, "code": code string}}]), prevention ([string]).
Be specific to this code; write for a user who hit the error.

Exception: {exception} (builtin ancestor: {ancestor})
Message template: {template}
Raised in {qualname} ({path}, line {line})
Guards leading to the raise: {guards}
Draft written from the facts:
{draft}

Code:
{code}
"""


def _llm_error(url: str, why: str) -> UsageError:
    return UsageError(f"--llm {url}: {why}")


def _post(url: str, body: dict[str, Any] | None, timeout: float) -> Any:
    """The endpoint's JSON answer, of any shape: the caller's lookups turn a wrong one into an error."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", "Accept": "application/json"},
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # the URL is the user's own endpoint
        return json.loads(resp.read(4_000_000))


def llm_sections(record: dict[str, Any], draft: CuratedFile, url: str, model: str | None, timeout: float = 120.0) -> dict[str, Any]:
    """The prose sections written by an OpenAI-compatible chat endpoint, validated."""
    base = url.rstrip("/")
    if not re.match(r"^https?://", base):
        raise _llm_error(url, "expected an http:// or https:// URL")
    try:
        if model is None:
            listing = _post(f"{base}/v1/models", None, timeout)
            model = listing["data"][0]["id"]
        prompt = _PROMPT.format(
            repo=record["repo"]["owner"] + "/" + record["repo"]["name"], exception=record["exception"]["qualname"],
            ancestor=record["exception"].get("builtin_ancestor"), template=record["message"]["text"],
            qualname=record["location"]["qualname"], path=record["location"]["path"], line=record["location"]["line"],
            guards=record["sites"][0]["facts"]["guards"] or "none", draft=dump_yaml(draft.model_dump(mode="json", exclude={"review", "related", "id"})),
            code=record["sites"][0]["snippet"]["code"],
        )
        reply = _post(f"{base}/v1/chat/completions", {
            "model": model, "temperature": 0.2,
            "messages": [{"role": "system", "content": "You write precise, concise error documentation as JSON."},
                         {"role": "user", "content": prompt}],
        }, timeout)
        content = reply["choices"][0]["message"]["content"]
    except urllib.error.HTTPError as exc:
        raise _llm_error(url, f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise _llm_error(url, f"cannot connect: {exc.reason}") from None
    except TimeoutError:
        raise _llm_error(url, f"no answer within {timeout:g}s") from None
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _llm_error(url, f"not an OpenAI-compatible answer ({type(exc).__name__}: {exc})") from None
    text = content.strip() if isinstance(content, str) else ""
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", text, re.S)
    if fence:
        text = fence.group(1)
    try:
        sections = json.loads(text)
        if not isinstance(sections, dict):
            raise ValueError("not an object")
        keep = {k: v for k, v in sections.items() if k in Explanation.model_fields}
        explanation = Explanation.model_validate(keep)
    except ValueError as exc:
        raise _llm_error(url, f"the model's answer is not the requested JSON object: {str(exc).splitlines()[0]}") from None
    return explanation.model_dump(mode="json", exclude_defaults=True)


def draft(root: Path, data: Path, entry_id: str, llm: str | None = None, model: str | None = None,
          timeout: float = 120.0) -> Path:
    """Write ``<id>.yaml`` as a draft; never over a reviewed or retired file."""
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
    entry = draft_from_facts(record, ds.commit)
    if llm:
        sections = llm_sections(record, entry, llm, model, timeout)
        entry = CuratedFile.model_validate({**entry.model_dump(mode="json"), **sections})
    body = entry.model_dump(mode="json", exclude_none=True)
    header = f"# Draft for {record['title']!r}: rewrite it, check it against the code, then `errcat curate review {entry_id}`.\n"
    write_text_atomic(path, header + dump_yaml(body))
    return path
