"""Keeping curated explanations true as upstream moves: check, move, review, retire, draft.

``check`` compares the curated files of a dataset with the dataset itself and collects every
problem before reporting:

* invalid: a file that does not parse or validate (file:line: what);
* orphan: a file whose id is no longer in the dataset (upstream reworded, moved or removed the
  raise), with the best candidates it may belong to now: same function, same file, most similar
  template;
* stale: the template text or the guards leading to the raise differ from what the file was
  reviewed for (the review metadata stores both, so no git access is needed);
* dangling: a curated see-also id that is not in the dataset;
* coverage: entries with a curated (reviewed, fresh) explanation over all entries, overall and per
  top-level package; drafts are counted apart.

Orphans and invalid files fail the check (stale ones too with ``strict``). Nothing is ever
deleted: an orphan stays on disk until ``move`` relinks it to its new id or ``retire`` marks it.
The commands that edit a file splice new values into its text, so prose and comments survive.
"""

from __future__ import annotations

import difflib
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .curated import SUFFIX, CuratedError, is_stale, load_set, parse_file, parse_yaml
from .dataset import Dataset, dataset_dir, open_dataset
from .dataset import datasets_under as dataset_paths
from .errors import UsageError
from .ids import check_id
from .models import CuratedFile, CuratedReview, Explanation
from .output import write_file
from .related import terms
from .sink import BIDI, BIDI_CHARS


# --------------------------------------------------------------------------- datasets


def datasets_under(root: Path) -> list[Dataset]:
    return [open_dataset(p) for p in dataset_paths(root)]


def dataset_with(root: Path, entry_id: str) -> Dataset:
    check_entry_id(entry_id)
    for ds in datasets_under(root):
        if entry_id in ds.by_id:
            return ds
    raise UsageError(f"no entry {entry_id} in any dataset under {root}")


def check_entry_id(value: str) -> str:
    try:
        return check_id(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def curated_dir(root: Path, ds: Dataset) -> Path:
    return dataset_dir(root, ds.manifest.repo.owner, ds.manifest.repo.name)


def top_package(module: str) -> str:
    return ".".join(module.split(".")[:2])


# --------------------------------------------------------------------------- check


@dataclass
class Candidate:
    id: str
    title: str
    score: float
    why: str


@dataclass
class Report:
    dataset: Path
    curated: Path
    entries: int = 0
    invalid: list[str] = field(default_factory=list)
    orphans: list[tuple[Path, CuratedFile, list[Candidate]]] = field(default_factory=list)
    stale: list[tuple[Path, CuratedFile, list[str]]] = field(default_factory=list)
    dangling: list[tuple[Path, str]] = field(default_factory=list)
    retired: list[Path] = field(default_factory=list)
    curated_ids: set[str] = field(default_factory=set)
    draft_ids: set[str] = field(default_factory=set)
    packages: dict[str, list[int]] = field(default_factory=dict)  # package -> [curated, drafts, all]

    def failed(self, strict: bool = False) -> bool:
        return bool(self.invalid or self.orphans or (strict and (self.stale or self.dangling)))

    @property
    def coverage(self) -> float:
        return len(self.curated_ids) / self.entries if self.entries else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "dataset": str(self.dataset),
            "curated": str(self.curated),
            "entries": self.entries,
            "curated_entries": len(self.curated_ids),
            "draft_entries": len(self.draft_ids),
            "coverage": round(self.coverage, 6),
            "packages": {k: {"curated": v[0], "drafts": v[1], "entries": v[2]} for k, v in sorted(self.packages.items())},
            "invalid": self.invalid,
            "orphans": [{"file": str(p), "id": e.id, "template": e.review.template,
                         "candidates": [c.__dict__ for c in cands]} for p, e, cands in self.orphans],
            "stale": [{"file": str(p), "id": e.id, "changed": what} for p, e, what in self.stale],
            "dangling": [{"file": str(p), "related": rid} for p, rid in self.dangling],
            "retired": [str(p) for p in self.retired],
        }


def candidates_for(entry: CuratedFile, ds: Dataset, taken: set[str], limit: int = 3) -> list[Candidate]:
    """Where an orphaned file's text most likely belongs now: the entries raised in the same
    function or file, or sharing terms with its template, ranked by place and template similarity."""
    rv = entry.review
    words = terms(rv.template)
    scored = []
    for r in ds.records:
        loc = r.location
        same_fn = loc.qualname == rv.qualname
        same_file = loc.path == rv.path
        shared = words & terms(r.message.text) if words else set()
        if not (same_fn or same_file or len(shared) >= 2):
            continue
        ratio = difflib.SequenceMatcher(None, rv.template, r.message.text, autojunk=False).ratio()
        # similarity dominates; place and exception break near-ties (a reworded message stays put)
        score = 1.5 * ratio + (1.0 if same_fn and same_file else 0.6 if same_fn else 0.0) + (0.3 if same_file else 0.0)
        score += 0.2 if r.exception.name == rv.exception else 0.0
        score -= 0.5 if r.id in taken else 0.0  # already explained by another file
        where = "same function" if same_fn and same_file else "same function name" if same_fn else "same file" if same_file else "shared terms"
        scored.append(Candidate(r.id, r.title, round(score, 4), f"{where}, template {ratio:.0%} similar"))
    scored.sort(key=lambda c: (-c.score, c.id))
    return scored[:limit]


def check(ds: Dataset, curated_root: Path) -> Report:
    owner, name = ds.manifest.repo.owner, ds.manifest.repo.name
    cset = load_set(curated_root, owner, name, strict=False)
    report = Report(dataset=ds.path, curated=cset.directory, entries=len(ds.records), invalid=list(cset.problems))
    for eid, entry in sorted(cset.entries.items()):
        path = cset.paths[eid]
        record = ds.by_id.get(eid)
        if entry.review.status == "retired":
            report.retired.append(path)
            continue
        if record is None:
            report.orphans.append((path, entry, candidates_for(entry, ds, set(cset.entries))))
            continue
        changed = is_stale(entry, record.message.text, record.facts.guards)
        if changed:
            report.stale.append((path, entry, changed))
        if entry.review.status == "reviewed" and not changed:
            report.curated_ids.add(eid)
        else:
            report.draft_ids.add(eid)
        for rid in entry.related:
            if rid not in ds.by_id:
                report.dangling.append((path, rid))
    for r in ds.records:
        counts = report.packages.setdefault(top_package(r.sites[0].module), [0, 0, 0])
        counts[0] += r.id in report.curated_ids
        counts[1] += r.id in report.draft_ids
        counts[2] += 1
    return report


def format_report(report: Report, all_packages: bool = False) -> list[str]:
    lines: list[str] = []
    for problem in report.invalid:
        lines.append(f"invalid  {problem}")
    for path, entry, cands in report.orphans:
        lines.append(f"orphan   {path}: {entry.id} is not in this dataset (written for {entry.review.qualname}: {entry.review.template!r})")
        for c in cands:
            lines.append(f"           candidate {c.id}  {c.title}  ({c.why}); relink: errcat curate move {entry.id} {c.id}")
        if not cands:
            lines.append("           no candidate: retire it with `errcat curate retire " + entry.id + "` if the error is gone")
    for path, entry, changed in report.stale:
        lines.append(f"stale    {path}: {' and '.join(changed)} changed since the review at {entry.review.commit[:12]}; "
                     f"re-read it, then `errcat curate review {entry.id}`")
    for path, rid in report.dangling:
        lines.append(f"dangling {path}: related id {rid} is not in this dataset")
    n, c, d = report.entries, len(report.curated_ids), len(report.draft_ids)
    lines.append(f"coverage {c}/{n} entries curated ({report.coverage:.2%}), {d} draft(s), {len(report.retired)} retired, "
                 f"{len(report.orphans)} orphan(s), {len(report.stale)} stale, {len(report.invalid)} invalid")
    for pkg, (pc, pd, pn) in sorted(report.packages.items(), key=lambda kv: (-kv[1][0], -kv[1][2], kv[0])):
        if pc or pd or all_packages:
            lines.append(f"  {pkg:<40} {pc:>4}/{pn:<5} curated ({pc / pn:.1%}), {pd} draft(s)")
    return lines


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


def write_text_atomic(path: Path, text: str) -> None:
    write_file(path, text.encode("utf-8"))


def review_for(record: dict[str, Any], commit: str, status: str, note: str | None = None) -> CuratedReview:
    return CuratedReview(
        status=status, commit=commit, exception=record["exception"]["name"], template=record["message"]["text"],
        guards=list(record["facts"]["guards"]), path=record["location"]["path"], qualname=record["location"]["qualname"],
        note=note,
    )


def splice(text: str, new_id: str | None = None, review: CuratedReview | None = None) -> str:
    """The file's text with its top-level ``id`` value and/or ``review`` block replaced; every
    other byte (prose, comments, layout) stays as written."""
    _, node = parse_yaml(text)
    assert isinstance(node, yaml.MappingNode)
    edits = []
    for k, v in node.value:
        if k.value == "id" and new_id is not None:
            edits.append((v.start_mark.index, v.end_mark.index, new_id))
        elif k.value == "review" and review is not None:
            block = dump_yaml({"review": review.model_dump(mode="json", exclude_none=True)})
            end = v.end_mark.index  # a block mapping ends where the next line starts (or at EOF)
            if end < len(text) and text[end - 1] != "\n":
                block = block.rstrip("\n")
            edits.append((k.start_mark.index, end, block))
    for start, end, value in sorted(edits, reverse=True):
        text = text[:start] + value + text[end:]
    return text


def _file(root: Path, ds: Dataset, entry_id: str) -> Path:
    return curated_dir(root, ds) / f"{entry_id}{SUFFIX}"


def move(root: Path, data: Path, old: str, new: str) -> tuple[Path, Path, CuratedReview]:
    """Relink ``old``'s file to entry ``new``: the text moves unchanged; the review metadata now
    records the new entry's template and guards. Refuses to overwrite an existing file."""
    check_entry_id(old)
    ds = dataset_with(data, new)
    src, dst = _file(root, ds, old), _file(root, ds, new)
    if not src.is_file():
        raise UsageError(f"no curated file {src}")
    if dst.exists():
        raise UsageError(f"{dst} already exists; merge the two by hand (no curated text is overwritten)")
    entry = parse_file(src)
    review = review_for(ds.by_id[new].model_dump(mode="json"), ds.commit, entry.review.status if entry.review.status != "retired" else "draft")
    text = splice(src.read_text(encoding="utf-8"), new_id=new, review=review)
    parse_file(dst, text)  # the result must be valid before anything changes on disk
    write_text_atomic(dst, text)
    src.unlink()
    return src, dst, entry.review


def mark(root: Path, data: Path, entry_id: str, status: str, note: str | None = None) -> Path:
    """``review``: the file now records the entry's current template, guards and commit, status
    reviewed. ``retire``: status retired (the entry may be gone from the dataset)."""
    check_entry_id(entry_id)
    datasets = datasets_under(data)
    ds = next((d for d in datasets if entry_id in d.by_id), None)
    if ds is None:
        if status != "retired":
            raise UsageError(f"no entry {entry_id} in any dataset under {data}; an orphan is moved or retired, not reviewed")
        ds = next((d for d in datasets if _file(root, d, entry_id).is_file()), None)
        if ds is None:
            raise UsageError(f"no curated file {entry_id}{SUFFIX} for any dataset under {data}")
    path = _file(root, ds, entry_id)
    if not path.is_file():
        raise UsageError(f"no curated file {path}")
    entry = parse_file(path)
    if status == "retired":
        review = entry.review.model_copy(update={"status": "retired", "note": note or entry.review.note})
    else:
        review = review_for(ds.by_id[entry_id].model_dump(mode="json"), ds.commit, "reviewed", note or entry.review.note)
    text = splice(path.read_text(encoding="utf-8"), review=review)
    parse_file(path, text)
    write_text_atomic(path, text)
    return path


# --------------------------------------------------------------------------- drafts

_FIELD_VALIDATOR = re.compile(r"""^(?:\w+\.)*field_validator\(\s*['"]([^'"]+)['"]""")
_MODEL_VALIDATOR = re.compile(r"^(?:\w+\.)*model_validator\b")


def draft_from_facts(record: dict[str, Any], commit: str) -> CuratedFile:
    """A draft written from machine-derived facts only: for a curator to rewrite, not to ship."""
    exc = record["exception"]
    facts = record["facts"]
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


def _post(url: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", "Accept": "application/json"},
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (the user's own endpoint)
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
            guards=record["facts"]["guards"] or "none", draft=dump_yaml(draft.model_dump(mode="json", exclude={"review", "related", "id"})),
            code=record["snippet"]["code"],
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
