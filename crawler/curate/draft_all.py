"""``errcat curate draft --all --llm URL``: drafts for the entries without a curated file, through
any OpenAI-compatible endpoint, hot ones (most reported, curated/<owner>/<name>/evidence.yaml)
first.

Each prompt is grounded in what the dataset knows of the entry: the code around the raise, the
derived facts (guards, handler, loops), the meaning (trigger, settings, fix direction, test
reproductions, callers) and how users reported it. Each answer is validated before anything is
written: the curated schema, then no invented names (``curate.names``: every flag, setting,
environment variable and function it mentions must exist in the crawled commit). A draft that
passes is written as ``status: draft`` with the model's name (``review.model``): records and
pages say "machine-written, not reviewed" until ``errcat curate review ID``.

The run is resumable: an entry that has a file (draft, reviewed or retired) is never asked for
again, and each file is written whole (renamed into place) as its answer arrives, so an
interrupted run keeps every draft it finished. Requests run ``concurrency`` at a time, each with
its timeout and retries (``curate.llm``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.base.errors import UsageError
from crawler.curate.from_facts import draft_from_facts
from crawler.curate.llm import Endpoint, LLMFailure
from crawler.curate.names import Vocabulary, invented
from crawler.curate.unedited import stamped
from crawler.curate.yamlio import dump_yaml
from crawler.model.records import CuratedFile, CuratedReview, Explanation, RepoRef

SYSTEM = "You write precise, concise error documentation as JSON. You only name flags, settings, environment variables and functions that appear in the material you are given."

PROMPT = """You explain one error of the Python project {repo} for its error catalogue, for a user who hit it.
Answer with one JSON object and nothing else, with exactly these keys:
  what_it_means (string), when_it_happens ({{"trigger": string, "common_situations": [string]}}),
  solutions ([string]), example_fix ({{"before": code string, "after": code string}}),
  defensive_patterns ([{{"strategy": string, "code": code string}}]), prevention ([string]).
Ground every statement in the material below. Name only flags, settings, environment variables and
functions that appear in it or in {repo}'s code; never make one up. Put names in `backticks`.

Exception: {exception} (builtin ancestor: {ancestor})
Message template: {template}
Raised in {qualname} ({path}, line {line})
Guards leading to the raise: {guards}
{meaning}
Code around the raise:
{code}
"""


@dataclass
class Outcome:
    """What became of one entry: drafted (``path``), rejected or failed (``reason``)."""

    id: str
    status: str
    reason: str = ""
    path: Path | None = None


def parse_sections(content: str) -> dict[str, Any]:
    """The prose sections of a model's answer, validated against the curated schema; a
    retryable LLMFailure when the answer is not the JSON object asked for."""
    text = content.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", text, re.S)
    if fence:
        text = fence.group(1)
    try:
        sections = json.loads(text)
        if not isinstance(sections, dict):
            raise ValueError("not an object")
        keep = {k: v for k, v in sections.items() if k in Explanation.model_fields and k not in ("evidence", "model")}
        explanation = Explanation.model_validate(keep)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested past the decoder's recursion
        reason = " ".join(str(exc).split())[:160]
        raise LLMFailure(f"the model's answer is not the requested JSON object: {reason}", retryable=True, rejected=True) from None
    if not explanation.what_it_means.strip():
        raise LLMFailure("the model's answer has no what_it_means", retryable=True, rejected=True)
    return explanation.model_dump(mode="json", exclude_defaults=True)


def _meaning_text(record: dict[str, Any]) -> str:
    meaning = record.get("meaning") or {}
    lines = []
    if meaning.get("trigger"):
        lines.append(f"When it is raised (derived from the code): {meaning['trigger']}")
    if meaning.get("fix"):
        lines.append(f"Fix direction (derived): {meaning['fix']}")
    for knob in meaning.get("knobs", [])[:8]:
        flags = ", ".join(knob.get("flags") or [])
        owner = f"{knob['owner']}." if knob.get("owner") else ""
        lines.append(f"Setting involved: {owner}{knob['name']} ({knob['kind']}{'; flags ' + flags if flags else ''})")
    for caller in meaning.get("callers", [])[:6]:
        entry = f", entry point: {caller['entry_point']}" if caller.get("entry_point") else ""
        lines.append(f"Reached from: {caller['qualname']} ({caller['path']}{entry})")
    for rep in meaning.get("reproductions", [])[:2]:
        lines.append(f"A test that raises it ({rep['path']}, {rep['qualname']}):\n{rep['code']}")
    for ev in (record.get("explanation") or {}).get("evidence", [])[:4]:
        if ev.get("quote"):
            lines.append(f"A user reported: {ev['quote']}")
    return "\n".join(lines)


def prompt_for(record: dict[str, Any]) -> str:
    site = record["sites"][0]
    return PROMPT.format(
        repo=record["repo"]["owner"] + "/" + record["repo"]["name"], exception=record["exception"]["qualname"],
        ancestor=record["exception"].get("builtin_ancestor"), template=record["message"]["text"],
        qualname=site["qualname"], path=site["path"], line=site["line"],
        guards=site["facts"]["guards"] or "none", meaning=_meaning_text(record), code=site["snippet"]["code"],
    )


def text_of(entry: CuratedFile) -> tuple[list[str], list[str]]:
    """(prose, code) of a draft: what the names check reads."""
    prose = [entry.what_it_means, entry.when_it_happens.trigger, *entry.when_it_happens.common_situations,
             *entry.solutions, *entry.prevention, *(p.strategy for p in entry.defensive_patterns)]
    code = [p.code for p in entry.defensive_patterns]
    if entry.example_fix is not None:
        code += [entry.example_fix.before, entry.example_fix.after]
    return prose, code


def draft_one(record: dict[str, Any], commit: str, endpoint: Endpoint, model: str, vocabulary: Vocabulary | None) -> CuratedFile:
    """The checked draft for one record; LLMFailure with the reason it was not made."""
    base = draft_from_facts(record, commit)
    sections = endpoint.chat(model, SYSTEM, prompt_for(record), parse_sections)
    body = {**base.model_dump(mode="json"), **sections}
    body["review"] = {**body["review"], "model": model}
    try:
        entry = CuratedFile.model_validate(body)
    except ValueError as exc:
        raise LLMFailure(f"the draft does not validate: {' '.join(str(exc).split())[:160]}", rejected=True) from None
    if vocabulary is not None:
        missing = invented(vocabulary, *text_of(entry))
        if missing:
            shown = ", ".join(missing[:8]) + (f" (+{len(missing) - 8} more)" if len(missing) > 8 else "")
            raise LLMFailure(f"invented names (not in {record['repo']['owner']}/{record['repo']['name']} at {commit[:12]}): {shown}",
                             rejected=True)
    return entry


def draft_text(entry: CuratedFile, title: str) -> str:
    header = (f"# Machine-written by {entry.review.model}, not reviewed ({title!r}): check every line against the code,\n"
              f"# then `errcat curate review {entry.id}`.\n")
    return header + dump_yaml(stamped(entry).model_dump(mode="json", exclude_none=True))


def hot_first(records: list[Any], taken: set[str]) -> list[Any]:
    """The live entries without a curated file: most reported first, then most sites, then id."""
    todo = [r for r in records if r.id not in taken and not (r.history is not None and r.history.retired)]
    return sorted(todo, key=lambda r: (-len(r.explanation.evidence), -len(r.sites), r.id))


def vocabulary_of(repo: str | None, commit: str, crawled: RepoRef, cache_dir: Path | None = None) -> Vocabulary:
    """Every name of the crawled commit's Python files (read from git, never checked out)."""
    from crawler.source.config import Upstream
    from crawler.source.opener import open_snapshot

    upstream = Upstream(name="drafts", url=crawled.url, owner=crawled.owner, repo=crawled.name)
    vocabulary = Vocabulary()
    with open_snapshot(repo=repo or crawled.url, ref=commit, pypi=None, upstream=upstream, include=["**/*.py"], exclude=[],
                       cache_dir=cache_dir) as snapshot:
        if snapshot.commit != commit:
            raise UsageError(f"{repo or crawled.url} at {commit[:12]} is {snapshot.commit[:12]}, not the crawled commit")
        for _, data in snapshot.read(snapshot.files + snapshot.tests):
            vocabulary.add(data)
    return vocabulary


def draft_all(root: Path, data: Path, endpoint: Endpoint, *, model: str | None, limit: int | None, concurrency: int,
              repo: str | None, cache_dir: Path | None = None, report: Callable[[Outcome], None] = lambda o: None) -> list[Outcome]:
    """Draft up to ``limit`` entries of every dataset under ``data``; each outcome is reported as
    it happens. Files already there are left alone (resumable)."""
    from crawler.catalogue.explanations import load_set
    from crawler.curate.check import datasets_under
    from crawler.curate.edit import _file, write_text_atomic

    datasets = datasets_under(data)
    if not datasets:
        raise UsageError(f"no dataset under {data}; run `errcat crawl` first")
    if model is None:
        model = endpoint.first_model()
    try:
        CuratedReview(status="draft", commit="0" * 40, exception="E", template="", path="p", qualname="q", model=model)
    except ValueError:
        raise UsageError(f"--model {model!r} is not a model name (one line, at most 200 characters)") from None
    outcomes: list[Outcome] = []
    left = limit
    for ds in datasets:
        if left is not None and left <= 0:
            break
        cset = load_set(root, ds.manifest.repo.owner, ds.manifest.repo.name, strict=False)
        # a file that does not parse is a curator's too: never drafted over
        taken = set(cset.entries) | ({p.name.removesuffix(".yaml") for p in cset.directory.glob("*.yaml")} if cset.directory.is_dir() else set())
        todo = hot_first(ds.records, taken)
        todo = todo[:left] if left is not None else todo
        if not todo:
            continue
        vocabulary = vocabulary_of(repo, ds.manifest.commit, ds.manifest.repo, cache_dir)
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            futures = {pool.submit(draft_one, r.model_dump(mode="json"), ds.commit, endpoint, model, vocabulary): r for r in todo}
            try:
                for future in as_completed(futures):
                    record = futures[future]
                    try:
                        entry = future.result()
                    except LLMFailure as failure:
                        outcome = Outcome(record.id, "rejected" if failure.rejected else "failed", failure.reason)
                    else:
                        path = _file(root, ds, record.id)
                        if path.exists():  # written meanwhile by someone else: theirs stays
                            outcome = Outcome(record.id, "skipped", f"{path} appeared meanwhile")
                        else:
                            write_text_atomic(path, draft_text(entry, record.title))
                            outcome = Outcome(record.id, "drafted", path=path)
                    outcomes.append(outcome)
                    report(outcome)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # what is written stays written
                raise
        if left is not None:
            left -= len(todo)
    return outcomes
