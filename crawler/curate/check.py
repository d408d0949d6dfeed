"""Keeping curated explanations true as upstream moves: check, move, review, retire, draft.

``check`` compares the curated files of a dataset with the dataset itself and collects every
problem before reporting:

* invalid: a file that does not parse or validate (file:line: what);
* orphan: a file whose id is no longer in the dataset (upstream reworded, moved or removed the
  raise), with the best candidates it may belong to now: same function, same file, most similar
  template;
* stale: the template text or the guards leading to the raise differ from what the file was
  reviewed for (the review metadata stores both, so no git access is needed);
* succeeded: a file whose entry a history catalogue retired with a successor (``history.replaced_by``,
  followed to the live entry at the end of the chain, or a live entry's ``history.replaces``): the
  error was reworded or re-typed, so the text is no orphan; the retired entry's page keeps it, and
  the successor's shows none of it (a page shows its successor's text, never its predecessor's)
  until ``move`` relinks it, or a text is written for the successor and this one retired (listed,
  not a failure);
* links: the curated lineage links (``lineage/links.yaml``, ``catalogue.lineage_links``), each
  held to the dataset: an id it does not hold, an old entry that is live, a cycle fail the check
  (invalid), as does a file that does not parse (a dataset without history, one crawl, is not
  held to them, nor is a history to a link whose old release it does not reach back to: a
  catalogue synced from v0.33.0 on holds no entry of 0.6.6); the valid ones count as successors above even before a history has written
  them into the records;
* gone: a file whose entry a history catalogue retired with no successor (upstream removed the
  check): its page keeps the text for users of the releases that raise it, so it is listed, not
  a failure (``strict`` fails it), with what to do: link a successor that tests the same thing
  (``lineage/links.yaml``) or ``retire`` the file;
* retired: a file whose error is gone upstream, its text kept (``curate retire``, or written for an
  older release's error): no orphan; in a dataset that holds its entry (an older release's, or a
  history's retired record) it is held to that code like a reviewed file (stale, or curated);
* later: a file written for an entry of a later release than the dataset's: a lineage link names
  it the successor of an entry this dataset holds live (the rewording is after this release), so
  it is no orphan here; the predecessor keeps its own text (a retired file reviewed for this
  release's code) and the two releases' pages each show theirs (listed, not a failure);
* dangling: a curated see-also id that is not in the dataset, nor the entry of a retired or a
  later file of the set (a see-also list may name both wordings, each release's page shows the
  one it holds);
* coverage: entries with a curated (reviewed, fresh) explanation over all entries (machine drafts a
  reviewer accepted as is counted apart among them), overall and per
  top-level package; drafts are counted apart.

Orphans and invalid files fail the check (stale ones too with ``strict``). Nothing is ever
deleted: an orphan stays on disk until ``move`` relinks it to its new id or ``retire`` marks it.
The commands that edit a file splice new values into its text, so prose and comments survive.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.base.errors import UsageError
from crawler.base.layout import dataset_dir
from crawler.catalogue.evidence import issue_number
from crawler.catalogue.explanations import accepted_draft, is_stale, load_set
from crawler.catalogue.related import terms
from crawler.extract.ids import check_id
from crawler.model.kinds import exception_word
from crawler.model.records import CuratedFile, CuratedLinks, Manifest
from crawler.model.shapes import RecordData
from crawler.publish.dataset import Dataset, load_manifest, load_record_data, open_dataset
from crawler.publish.dataset_dirs import each_readable

# --------------------------------------------------------------------------- datasets


def datasets_under(root: Path, report: Callable[[str], None] | None = None) -> list[Dataset]:
    """Every dataset under ``root`` that can be read; one that cannot is skipped with a line
    saying why (``each_readable``), when others can be."""
    from crawler.base.progress import REPORTER

    return each_readable(root, open_dataset, report or REPORTER)


@dataclass
class Entries:
    """A dataset as ``check`` reads it: its manifest and its records as plain data (live and
    retired, file order), each line held to the record schema and the manifest as
    ``dataset.iter_record_data`` holds them. Building a model of every record cost the check
    three quarters of its CPU (4.6 s of 6 s on vLLM v0.33.0's 11,590 records; 1.8 s so)."""

    path: Path
    manifest: Manifest
    records: list[RecordData]
    by_id: dict[str, RecordData] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {r["id"]: r for r in self.records}


def open_entries(path: Path) -> Entries:
    """The dataset at ``path`` as plain data (``dataset.load_record_data``: a damaged one is
    refused with the line the other readers give). A line whose bytes this errcat validated
    before (``validated``: each crawl remembers the lines it writes) is not checked against the
    record schema again (that was 0.4 of the check's CPU on vLLM v0.33.0); every other check is
    made, and every other line is validated."""
    from crawler.base.cachedir import default_cache_dir
    from crawler.publish import validated

    manifest = load_manifest(path)
    return Entries(path, manifest, load_record_data(path, manifest, known=validated.load(default_cache_dir())))


def entries_under(root: Path, report: Callable[[str], None] | None = None) -> list[Entries]:
    """:func:`datasets_under` for ``check``: every readable dataset under ``root`` as plain data."""
    from crawler.base.progress import REPORTER

    return each_readable(root, open_entries, report or REPORTER)


def _retired(record: RecordData) -> bool:
    return bool((record.get("history") or {}).get("retired"))


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
    succeeded: list[tuple[Path, CuratedFile, str]] = field(default_factory=list)  # file, its entry, the live successor's id
    successor_files: set[str] = field(default_factory=set)  # of the successors above, those with a curated file of their own
    later: list[tuple[Path, CuratedFile, str]] = field(default_factory=list)  # file, its entry, the live predecessor's id
    gone: list[tuple[Path, CuratedFile, str]] = field(default_factory=list)  # file, its entry, the release it was removed in
    unheld: int = 0  # curated lineage links older than the history this dataset holds (not checked)
    links: int = 0  # curated lineage links that hold (``lineage_links``)
    curated_ids: set[str] = field(default_factory=set)
    draft_ids: set[str] = field(default_factory=set)
    accepted_ids: set[str] = field(default_factory=set)  # of curated_ids: machine drafts accepted as is, not a person's text
    packages: dict[str, list[int]] = field(default_factory=dict)  # package -> [curated, drafts, all]
    evidence: Path | None = None
    evidence_ids: set[str] = field(default_factory=set)  # entries of the dataset with reports
    evidence_stale: list[str] = field(default_factory=list)  # evidence ids no longer in the dataset
    hot: list[tuple[str, str, list[str], str]] = field(default_factory=list)  # id, title, links, status: uncurated, most reported first

    def failed(self, strict: bool = False) -> bool:
        return bool(self.invalid or self.orphans or (strict and (self.stale or self.gone or self.dangling or self.evidence_stale)))

    @property
    def coverage(self) -> float:
        return len(self.curated_ids) / self.entries if self.entries else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "dataset": str(self.dataset),
            "curated": str(self.curated),
            "entries": self.entries,
            "curated_entries": len(self.curated_ids),
            "accepted_as_is_entries": len(self.accepted_ids),
            "draft_entries": len(self.draft_ids),
            "coverage": round(self.coverage, 6),
            "packages": {k: {"curated": v[0], "drafts": v[1], "entries": v[2]} for k, v in sorted(self.packages.items())},
            "invalid": self.invalid,
            "orphans": [{"file": str(p), "id": e.id, "template": e.review.template, "candidates": [c.__dict__ for c in cands]} for p, e, cands in self.orphans],
            "stale": [{"file": str(p), "id": e.id, "changed": what} for p, e, what in self.stale],
            "dangling": [{"file": str(p), "related": rid} for p, rid in self.dangling],
            "retired": [str(p) for p in self.retired],
            "succeeded": [{"file": str(p), "id": e.id, "successor": new} for p, e, new in self.succeeded],
            "later": [{"file": str(p), "id": e.id, "predecessor": old} for p, e, old in self.later],
            "gone": [{"file": str(p), "id": e.id, "removed_in": removed} for p, e, removed in self.gone],
            "lineage_links_not_held": self.unheld,
            "lineage_links": self.links,
            "evidence": {"file": str(self.evidence) if self.evidence else None, "entries": len(self.evidence_ids), "stale": self.evidence_stale},
            "hot": [{"id": eid, "title": title, "reports": links, "status": status} for eid, title, links, status in self.hot],
        }


def candidates_for(entry: CuratedFile, ds: Entries, taken: set[str], limit: int = 3) -> list[Candidate]:
    """Where an orphaned file's text most likely belongs now: the entries raised in the same
    function or file, or sharing terms with its template, ranked by place and template similarity."""
    rv = entry.review
    words = terms(rv.template)
    scored = []
    for r in ds.records:
        loc, text = r["location"], r["message"]["text"]
        same_fn = loc["qualname"] == rv.qualname
        same_file = loc["path"] == rv.path
        shared = words & terms(text) if words else set()
        if not (same_fn or same_file or len(shared) >= 2):
            continue
        ratio = difflib.SequenceMatcher(None, rv.template, text, autojunk=False).ratio()
        # similarity dominates; place and exception break near-ties (a reworded message stays put)
        score = 1.5 * ratio + (1.0 if same_fn and same_file else 0.6 if same_fn else 0.0) + (0.3 if same_file else 0.0)
        score += 0.2 if exception_word(r) == rv.exception else 0.0
        score -= 0.5 if r["id"] in taken else 0.0  # already explained by another file
        where = "same function" if same_fn and same_file else "same function name" if same_fn else "same file" if same_file else "shared terms"
        scored.append(Candidate(r["id"], r["title"], round(score, 4), f"{where}, template {ratio:.0%} similar"))
    scored.sort(key=lambda c: (-c.score, c.id))
    return scored[:limit]


def live_successors(ds: Entries, reviewed: dict[str, str] | None = None) -> dict[str, str]:
    """Each id a history catalogue records as succeeded (reworded, re-typed), with the live entry
    its chain of successors ends at: ``history.replaced_by`` followed, and a live entry's
    ``history.replaces`` for ids the catalogue no longer holds; ``reviewed``: links made by review
    (old id to successor), over what the records say. Ids whose chain ends retired are left out."""
    after: dict[str, str] = {}
    for r in ds.records:
        h = r.get("history")
        if h is None:
            continue
        if h.get("replaced_by"):
            after[r["id"]] = h["replaced_by"]
        for old in h.get("replaces", ()):
            after.setdefault(old, r["id"])
    after.update(reviewed or {})
    out: dict[str, str] = {}
    for start in after:
        current, seen = start, {start}
        while current in after and after[current] not in seen:
            current = after[current]
            seen.add(current)
        record = ds.by_id.get(current)
        if current != start and record is not None and not _retired(record):
            out[start] = current
    return out


def check(ds: Entries, curated_root: Path) -> Report:
    owner, name = ds.manifest.repo.owner, ds.manifest.repo.name
    # the crawl's memo of the curated files' models (PyYAML in pure Python was half of this check)
    cset = load_set(curated_root, owner, name, strict=False, memo=_curated_memo())
    report = Report(dataset=ds.path, curated=cset.directory, entries=len(ds.records), invalid=list(cset.problems))
    links = _load_links(report, curated_root, owner, name)
    succeeded = live_successors(ds, _links(report, curated_root, owner, name, ds, links))
    later = _later(ds, links)
    # ids the set accounts for though this dataset lacks them: a retired text's, a later release's
    known = {eid for eid, e in cset.entries.items() if e.review.status == "retired"} | set(later)
    for eid, entry in sorted(cset.entries.items()):
        path = cset.paths[eid]
        record = ds.by_id.get(eid)
        if entry.review.status == "retired":
            report.retired.append(path)
            if record is not None:
                # a dataset that holds the gone error (an older release's, a history's retired
                # record): its text explains it there while the code is the one it was reviewed for
                if changed := is_stale(entry, record["message"]["text"], record["sites"][0]["facts"]["guards"]):
                    report.stale.append((path, entry, changed))
                else:
                    report.curated_ids.add(eid)
            continue
        if eid in succeeded and (record is None or _retired(record)):
            # reworded or re-typed: the retired page keeps the text, the successor's has none of
            # it until it is relinked or written for it; no orphan
            report.succeeded.append((path, entry, succeeded[eid]))
            if succeeded[eid] in cset.entries:
                report.successor_files.add(succeeded[eid])
            continue
        if record is None and eid in later:
            # the successor of a live entry of this dataset by a reviewed link: written for the
            # release that reworded it, later than this one; no orphan
            report.later.append((path, entry, later[eid]))
            continue
        if record is None:
            report.orphans.append((path, entry, candidates_for(entry, ds, set(cset.entries))))
            continue
        if _retired(record):
            # removed upstream, no successor: the retired page still shows the text to users of
            # the releases that raise it; the maintainer decides whether a check of today succeeds it
            report.gone.append((path, entry, _removed_in(record)))
        changed = is_stale(entry, record["message"]["text"], record["sites"][0]["facts"]["guards"])
        if changed:
            report.stale.append((path, entry, changed))
        if entry.review.status == "reviewed" and not changed:
            report.curated_ids.add(eid)
            if accepted_draft(entry) is not None:
                report.accepted_ids.add(eid)
        else:
            report.draft_ids.add(eid)
        for rid in entry.related:
            if rid not in ds.by_id and rid not in known:
                report.dangling.append((path, rid))
    _check_evidence(report, ds, cset.directory, known)
    for r in ds.records:
        counts = report.packages.setdefault(top_package(r["sites"][0]["module"]), [0, 0, 0])
        counts[0] += r["id"] in report.curated_ids
        counts[1] += r["id"] in report.draft_ids
        counts[2] += 1
    return report


def _curated_memo() -> Path:
    """The cache file the crawl keeps the valid curated files' models in (``explanations._Memo``)."""
    from crawler.base.cachedir import default_cache_dir

    return default_cache_dir() / "curated.json"


def _load_links(report: Report, root: Path, owner: str, name: str) -> CuratedLinks | None:
    """The curated lineage links, or None without a file (a file that does not parse: invalid)."""
    from crawler.catalogue.explanations import CuratedError
    from crawler.catalogue.lineage_links import load_links

    try:
        return load_links(root, owner, name)
    except CuratedError as exc:
        report.invalid += exc.problems
        return None


def _later(ds: Entries, links: CuratedLinks | None) -> dict[str, str]:
    """The successors the links name that this dataset lacks while it holds their old entry
    live, to that old id: the dataset is of a release before the rewording (v0.33.0's crawl, for
    a link of 0.34.0's successor), so a text written for the successor is a later release's."""
    out: dict[str, str] = {}
    for link in links.links if links is not None else ():
        old = ds.by_id.get(link.old)
        if link.new not in ds.by_id and old is not None and not _retired(old):
            out[link.new] = link.old
    return out


def _links(report: Report, root: Path, owner: str, name: str, ds: Entries, links: CuratedLinks | None) -> dict[str, str]:
    """The curated lineage links held to the dataset (``lineage_links.problems``: each problem
    invalid), and of them those with no problem, old id to successor."""
    from crawler.catalogue.lineage_links import links_path, problems

    if links is None or not any(r.get("history") for r in ds.records):
        return {}  # a dataset of one crawl has no retired entries to hold the links to
    oldest = _oldest_release(ds)
    held = [link for link in links.links if link.old in ds.by_id or not _before(link.review.old_release, oldest)]
    report.unheld = len(links.links) - len(held)
    found = problems(links.model_copy(update={"links": held}), ds.by_id, links_path(root, owner, name))
    report.invalid += list(found.values())
    report.links = len(held) - len(found)
    return {link.old: link.new for link in held if link.old not in found}


def _removed_in(record: RecordData) -> str:
    h = record.get("history") or {}
    removed = h.get("removed_in") or {}
    return str(removed.get("version") or str(removed.get("commit") or "")[:12] or "a later release")


def _release_key(version: str) -> Any:
    """A release name as ``packaging`` orders it (``v0.33.0`` and ``0.33.0`` alike), or None for a
    name that is no release (a branch, a commit)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version.removeprefix("v"))
    except InvalidVersion:
        return None


def _oldest_release(ds: Entries) -> Any:
    """The oldest release the dataset's histories reach back to (``first_seen``), or None when
    none names a release."""
    keys = [_release_key(str(((r.get("history") or {}).get("first_seen") or {}).get("version") or "")) for r in ds.records]
    found = [k for k in keys if k is not None]
    return min(found) if found else None


def _before(release: str, oldest: Any) -> bool:
    """A link's old release is older than the history the dataset holds: the dataset cannot
    hold its old entry, so the link is not held to it (neither applied nor refused)."""
    key = _release_key(release)
    return oldest is not None and key is not None and key < oldest


def _check_evidence(report: Report, ds: Entries, directory: Path, known: set[str] | frozenset[str] = frozenset()) -> None:
    """The evidence file's problems (invalid: fails; ids gone from the dataset: stale, unless
    ``known``: the entry of a retired or a later text, whose releases' pages carry the reports)
    and the hot list: entries without a fresh reviewed text, most reported first."""
    from crawler.catalogue.evidence import load
    from crawler.catalogue.explanations import CuratedError

    try:
        evidence = load(directory, ds.manifest.repo, _curated_memo())
    except CuratedError as exc:
        report.invalid += exc.problems
        return
    if evidence.digest is None:
        return
    report.evidence = evidence.path
    for eid, reports in sorted(evidence.reports.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        record = ds.by_id.get(eid)
        if record is None:
            if eid not in known:
                report.evidence_stale.append(eid)
            continue
        report.evidence_ids.add(eid)
        if eid not in report.curated_ids:
            status = "draft" if eid in report.draft_ids else "absent"
            report.hot.append((eid, record["title"], [ev["url"] for ev in reports], status))


def format_report(report: Report, all_packages: bool = False, hot: int = 10) -> list[str]:
    lines: list[str] = []
    for problem in report.invalid:
        lines.append(f"invalid  {problem}")
    for path, entry, cands in report.orphans:
        lines.append(f"orphan   {path}: {entry.id} is not in this dataset (written for {entry.review.qualname}: {entry.review.template!r})")
        for c in cands:
            lines.append(f"           candidate {c.id}  {c.title}  ({c.why}); relink: errcat curate move {entry.id} {c.id}")
        if not cands:
            lines.append("           no candidate: retire it with `errcat curate retire " + entry.id + "` if the error is gone")
    for path, entry, new in report.succeeded:
        if new in report.successor_files:
            lines.append(
                f"reworded {path}: {entry.id} was succeeded by {new}, which has a curated file of its own; {entry.id}'s "
                f"page keeps this text for the releases that raise it: `errcat curate retire {entry.id}` says so"
            )
            continue
        lines.append(
            f"reworded {path}: {entry.id} was succeeded by {new}, whose page shows none of this text (a page shows its "
            f"successor's text, never its predecessor's); {entry.id}'s keeps it: re-read it for the new wording, then "
            f"`errcat curate move {entry.id} {new}`"
        )
    for path, entry, old in report.later:
        lines.append(
            f"later    {path}: {entry.id} is the successor of {old} by a reviewed lineage link, a later release's entry; {old} keeps its own text here"
        )
    for path, entry, removed in report.gone:
        lines.append(
            f"gone     {path}: {entry.id} was removed upstream in {removed} and nothing succeeds it; its page keeps this "
            f"text for users of the releases that raise it: if a check of today tests the same thing, link it in "
            f"lineage/links.yaml, else `errcat curate retire {entry.id}`"
        )
    for path, entry, changed in report.stale:
        lines.append(
            f"stale    {path}: {' and '.join(changed)} changed since the review at {entry.review.commit[:12]}; "
            f"re-read it, then `errcat curate review {entry.id}`"
        )
    for path, rid in report.dangling:
        lines.append(f"dangling {path}: related id {rid} is not in this dataset")
    for eid in report.evidence_stale:
        lines.append(
            f"stale    {report.evidence}: evidence for {eid}, which is not in this dataset: relink its reports to the entry "
            f"that raises the error now (`errcat match` on the quote finds it) or drop them"
        )
    curated, drafts = len(report.curated_ids), len(report.draft_ids)
    accepted = f"; {len(report.accepted_ids)} of them machine drafts accepted as is" if report.accepted_ids else ""
    lines.append(
        f"coverage {curated}/{report.entries} entries curated ({report.coverage:.2%}{accepted}), {drafts} draft(s), {len(report.retired)} retired, "
        f"{len(report.succeeded)} reworded, {len(report.later)} of a later release, {len(report.gone)} gone, {len(report.orphans)} orphan(s), {len(report.stale)} stale, "
        f"{len(report.invalid)} invalid"
    )
    if report.links:
        lines.append(f"lineage  {report.links} successor(s) linked by review hold")
    if report.unheld:
        lines.append(f"lineage  {report.unheld} link(s) of releases older than this history reaches back to: not checked")
    if report.evidence is not None:
        reported_curated = len(report.evidence_ids & report.curated_ids)
        lines.append(
            f"evidence {len(report.evidence_ids)} entries with reports ({reported_curated} curated, {len(report.hot)} not yet), "
            f"{len(report.evidence_stale)} stale"
        )
    for pkg, (pc, pd, pn) in sorted(report.packages.items(), key=lambda kv: (-kv[1][0], -kv[1][2], kv[0])):
        if pc or pd or all_packages:
            lines.append(f"  {pkg:<40} {pc:>4}/{pn:<5} curated ({pc / pn:.1%}), {pd} draft(s)")
    for eid, title, links, status in report.hot[:hot]:
        cited = ", ".join(issue_number(u) for u in links[:5]) + (" ..." if len(links) > 5 else "")
        lines.append(f"next     {eid}  reported {len(links)}x ({cited}), {status}: {title}")
    if len(report.hot) > hot:
        lines.append(f"           ... and {len(report.hot) - hot} more reported entries without a reviewed text (--hot N lists more)")
    return lines
