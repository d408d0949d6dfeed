"""``errcat curate draft --all --llm URL``: drafts for the entries without a curated file, through
any OpenAI-compatible endpoint, hot ones (most reported, curated/<owner>/<name>/evidence.yaml)
first.

Each prompt is grounded in what the dataset knows of the entry: the code around the raise, the
derived facts (guards, handler, loops), the meaning (trigger, settings, fix direction, test
reproductions, callers) and how users reported it. Each answer is validated before anything is
written: no API key in it (``curate.secret``: in any form a model may echo it), the curated
schema, no invented names (``curate.invented_names``: every flag, setting, environment variable and
function it mentions must exist in the crawled commit), links only to the upstream's own pages and
the hosts its configuration names (``curate.links``), and the very bytes about to be written read
back by the crawl's own reader (``explanations.parse_bytes``: its size, depth and shape limits),
so no draft leaves a file a crawl refuses. A draft that passes is written as ``status: draft``
with the model's name (``review.model``): records and pages say "machine-written, not reviewed"
until ``errcat curate review ID``. Where it is written is the catalogue's business, never the
answer's: ``<curated>/<owner>/<name>/<id>.yaml`` of the dataset's checked identity and the
record's id (an answer's ``id``, ``review`` or ``related`` are not sections, and are dropped).
Every check runs inside the endpoint's check of the answer, so every reason leaves through the
one place that masks the key (``Endpoint.with_retries``).

The run is resumable: an entry that has a file (draft, reviewed or retired) is never asked for
again, and each file is written whole (renamed into place) as its answer arrives, so an
interrupted run keeps every draft it finished. Requests run ``concurrency`` at a time, each with
its timeout and retries (``curate.llm``), within the run's budget of time and tokens
(``llm.Budget``): what the budget leaves unasked is "unstarted", for the next run. ``only``
narrows the run to some entries: the scheduled sync drafts the ones its diff report lists as
added or changed (:func:`changed_ids`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crawler.base.errors import UsageError
from crawler.catalogue.explanations import CuratedError, parse_bytes
from crawler.curate.from_facts import draft_from_facts
from crawler.curate.invented_names import Vocabulary, invented
from crawler.curate.links import LinkRule
from crawler.curate.llm import Endpoint, LLMFailure
from crawler.curate.unedited import stamped
from crawler.curate.yamlio import dump_yaml
from crawler.model.kinds import exception_qualname
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
    """What became of one entry: drafted (``path``), rejected, failed or unstarted (``reason``)."""

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
        reason = problems(exc) if isinstance(exc, ValidationError) else " ".join(str(exc).split())
        raise LLMFailure(f"the model's answer is not the requested JSON object: {reason}", retryable=True, rejected=True) from None
    if not explanation.what_it_means.strip():
        raise LLMFailure("the model's answer has no what_it_means", retryable=True, rejected=True)
    return explanation.model_dump(mode="json", exclude_defaults=True)


def problems(exc: ValidationError) -> str:
    """A validation error's first problems, where and what, without the values (an answer's: they
    would carry its words, cut at pydantic's length, into the line)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    shown = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(answer)'}: {e['msg'].removeprefix('Value error, ')}" for e in errors[:3])
    return shown + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "")


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
        repo=record["repo"]["owner"] + "/" + record["repo"]["name"],
        exception=exception_qualname(record),
        ancestor=(record["exception"] or {}).get("builtin_ancestor"),
        template=record["message"]["text"],
        qualname=site["qualname"],
        path=site["path"],
        line=site["line"],
        guards=site["facts"]["guards"] or "none",
        meaning=_meaning_text(record),
        code=site["snippet"]["code"],
    )


def text_of(entry: CuratedFile) -> tuple[list[str], list[str]]:
    """(prose, code) of a draft: what the names check reads."""
    prose = [
        entry.what_it_means,
        entry.when_it_happens.trigger,
        *entry.when_it_happens.common_situations,
        *entry.solutions,
        *entry.prevention,
        *(p.strategy for p in entry.defensive_patterns),
    ]
    code = [p.code for p in entry.defensive_patterns]
    if entry.example_fix is not None:
        code += [entry.example_fix.before, entry.example_fix.after]
    return prose, code


def draft_one(record: dict[str, Any], commit: str, endpoint: Endpoint, model: str, vocabulary: Vocabulary | None, path: Path, links: LinkRule) -> str:
    """The text of the checked draft for one record, as it is to be written at ``path``;
    LLMFailure with the reason it was not made (masked: every check runs inside ``endpoint``'s)."""
    base = draft_from_facts(record, commit)
    where = f"{record['repo']['owner']}/{record['repo']['name']}"

    def checked(content: str) -> str:
        sections = parse_sections(content)
        body = {**base.model_dump(mode="json"), **sections}
        body["review"] = {**body["review"], "model": model}
        try:
            entry = CuratedFile.model_validate(body)
        except ValidationError as exc:
            raise LLMFailure(f"the draft does not validate: {problems(exc)}", rejected=True) from None
        if vocabulary is not None:
            missing = invented(vocabulary, *text_of(entry))
            if missing:
                raise LLMFailure(f"invented names (not in {where} at {commit[:12]}): {_some(missing)}", rejected=True)
        foreign = links.foreign(*text_of(entry))
        if foreign:
            allowed = ", ".join([f"https://{links.host}/{links.owner}/{links.name}", *(f"https://{h}" for h in links.hosts)])
            raise LLMFailure(f"links off the upstream's pages (allowed: {allowed}; see draft_link_hosts): {_some(foreign)}", rejected=True)
        text = draft_text(entry, record["title"])
        if endpoint.quotes_key(text):
            raise LLMFailure("the draft would quote the API key; nothing of it is written", rejected=True)
        try:  # the crawl's own reader, on the very bytes: a file it refuses would stop every crawl
            parse_bytes(path, text.encode())
        except CuratedError as exc:
            raise LLMFailure(f"the crawl would refuse the draft: {exc.problems[0]}", rejected=True) from None
        return text

    return endpoint.chat(model, SYSTEM, prompt_for(record), checked)


def _some(items: list[str]) -> str:
    return ", ".join(items[:8]) + (f" (+{len(items) - 8} more)" if len(items) > 8 else "")


def links_of(repo: RepoRef, link_hosts: Mapping[str, Sequence[str]]) -> LinkRule:
    """Where ``repo``'s drafts may link: its own pages, and the hosts the upstream of that
    identity names (``draft_link_hosts``, by ``owner/name`` in any case)."""
    return LinkRule(host=repo.host, owner=repo.owner, name=repo.name, hosts=tuple(link_hosts.get(f"{repo.owner}/{repo.name}".lower(), ())))


def draft_text(entry: CuratedFile, title: str) -> str:
    header = (
        f"# Machine-written by {entry.review.model}, not reviewed ({title!r}): check every line against the code,\n# then `errcat curate review {entry.id}`.\n"
    )
    return header + dump_yaml(stamped(entry).model_dump(mode="json", exclude_none=True))


def hot_first(records: list[Any], taken: set[str], only: set[str] | None = None) -> list[Any]:
    """The live entries without a curated file (of ``only``, when given): most reported first,
    then most sites, then id."""
    todo = [r for r in records if r.id not in taken and not (r.history is not None and r.history.retired) and (only is None or r.id in only)]
    return sorted(todo, key=lambda r: (-len(r.explanation.evidence), -len(r.sites), r.id))


def changed_ids(report: Path) -> set[str]:
    """The entries a diff report (``errcat sync --report``, ``errcat diff --format json``) lists
    as added or changed: every change but a removal, by its id on the new side."""
    from crawler.model.diff import ChangeKind, DiffReport

    try:
        parsed = DiffReport.model_validate_json(report.read_bytes())
    except OSError as exc:
        raise UsageError(f"--changed {report}: cannot read it ({exc.strerror})") from None
    except ValidationError as exc:
        raise UsageError(f"--changed {report}: not a diff report ({problems(exc)})") from None
    return {c.id for c in parsed.changes if c.kind != ChangeKind.REMOVED}


def vocabulary_of(repo: str | None, commit: str, crawled: RepoRef, cache_dir: Path | None = None) -> Vocabulary:
    """Every name of the crawled commit's Python files (read from git, never checked out)."""
    from crawler.source.config import Upstream
    from crawler.source.opener import open_snapshot

    upstream = Upstream(name="drafts", url=crawled.url, owner=crawled.owner, repo=crawled.name)
    vocabulary = Vocabulary()
    with open_snapshot(repo=repo or crawled.url, ref=commit, pypi=None, upstream=upstream, include=["**/*.py"], exclude=[], cache_dir=cache_dir) as snapshot:
        if snapshot.commit != commit:
            raise UsageError(f"{repo or crawled.url} at {commit[:12]} is {snapshot.commit[:12]}, not the crawled commit")
        for _, data in snapshot.read(snapshot.files + snapshot.tests):
            vocabulary.add(data)
    return vocabulary


def _check_model(model: str) -> str:
    try:
        CuratedReview(status="draft", commit="0" * 40, exception="E", template="", path="p", qualname="q", model=model)
    except ValueError:
        raise UsageError(f"--model {model!r} is not a model name (one line, at most 200 characters)") from None
    return model


def draft_all(
    root: Path,
    data: Path,
    endpoint: Endpoint,
    *,
    model: str | None,
    limit: int | None,
    concurrency: int,
    repo: str | None,
    cache_dir: Path | None = None,
    report: Callable[[Outcome], None] = lambda o: None,
    link_hosts: Mapping[str, Sequence[str]] | None = None,
    only: set[str] | None = None,
) -> list[Outcome]:
    """Draft up to ``limit`` entries of every dataset under ``data`` (of ``only``, when given);
    each outcome is reported as it happens. Files already there are left alone (resumable).
    ``link_hosts``: the hosts drafts may link to besides the repository's own pages, by
    lowercase ``owner/name`` (:func:`links_of`)."""
    from crawler.catalogue.explanations import load_set
    from crawler.curate.check import datasets_under
    from crawler.curate.edit import curated_file, write_text_atomic

    datasets = datasets_under(data)
    if not datasets:
        raise UsageError(f"no dataset under {data}; run `errcat crawl` first")
    if model is not None:
        _check_model(model)
    outcomes: list[Outcome] = []
    left = limit
    for ds in datasets:
        if left is not None and left <= 0:
            break
        cset = load_set(root, ds.manifest.repo.owner, ds.manifest.repo.name, strict=False)
        # a file that does not parse is a curator's too: never drafted over
        taken = set(cset.entries) | ({p.name.removesuffix(".yaml") for p in cset.directory.glob("*.yaml")} if cset.directory.is_dir() else set())
        todo = hot_first(ds.records, taken, only)
        todo = todo[:left] if left is not None else todo
        if not todo:
            continue
        if model is None:  # asked only when there is something to draft
            model = _check_model(endpoint.first_model())
        vocabulary = vocabulary_of(repo, ds.manifest.commit, ds.manifest.repo, cache_dir)
        links = links_of(ds.manifest.repo, link_hosts or {})
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            futures = {
                pool.submit(draft_one, r.model_dump(mode="json"), ds.commit, endpoint, model, vocabulary, curated_file(root, ds, r.id), links): r for r in todo
            }
            try:
                for future in as_completed(futures):
                    record = futures[future]
                    try:
                        text = future.result()
                    except LLMFailure as failure:
                        status = "unstarted" if failure.unstarted else "rejected" if failure.rejected else "failed"
                        outcome = Outcome(record.id, status, failure.reason)
                    else:
                        path = curated_file(root, ds, record.id)
                        if path.exists():  # written meanwhile by someone else: theirs stays
                            outcome = Outcome(record.id, "skipped", f"{path} appeared meanwhile")
                        else:
                            write_text_atomic(path, text)  # the bytes checked, no others
                            outcome = Outcome(record.id, "drafted", path=path)
                    outcomes.append(outcome)
                    report(outcome)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # what is written stays written
                raise
        if left is not None:
            left -= len(todo)
    return outcomes


def drafts_summary(outcomes: Sequence[Outcome], root: Path) -> str:
    """A Markdown section for a pull request's body: the drafts written (by id and file, nothing
    of the answers: they were made from crawled text), labelled machine-written, not reviewed."""
    from crawler.catalogue.explanations import parse_file

    drafted = sorted((o for o in outcomes if o.status == "drafted" and o.path is not None), key=lambda o: o.id)
    models = sorted({parse_file(o.path).review.model or "" for o in drafted if o.path is not None} - {""})
    left = {s: sum(o.status == s for o in outcomes) for s in ("rejected", "failed", "unstarted")}
    lines = [
        "## Machine-written drafts, not reviewed",
        "",
        f"{len(drafted)} new or changed entr{'y' if len(drafted) == 1 else 'ies'} without an explanation "
        f"{'was' if len(drafted) == 1 else 'were'} drafted through the repository's endpoint"
        + (f" (model {', '.join(f'`{_plain(m)}`' for m in models)})" if models else "")
        + ". "
        "Each file is `status: draft` and its page says machine-written, not reviewed: check every line against "
        "the code, then `errcat curate review ID`.",
        "",
        "| Entry | Draft |",
        "|---|---|",
        *(f"| `{o.id}` | `{_relative(o.path, root)}` |" for o in drafted if o.path is not None),
    ]
    if any(left.values()):
        lines += ["", "Not drafted this time: " + ", ".join(f"{n} {s}" for s, n in left.items() if n) + " (see the sync's log)."]
    return "\n".join(lines) + "\n"


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.parent).as_posix()
    except ValueError:
        return path.name


def _plain(text: str) -> str:
    """A model name as Markdown code: one line, no backtick (it would end the span), no bidi control."""
    from crawler.base.sink import BIDI_CHARS

    return re.sub(f"[`\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CHARS}]", " ", text)[:200]
