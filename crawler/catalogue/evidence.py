"""Where users hit each error: ``curated/<owner>/<name>/evidence.yaml`` (entry id -> reports).

Reviewed human data, kept beside the curated explanations and read as strictly (no duplicate
keys, no tags, a size limit, the schema): every link is an issue, pull request or discussion of
the upstream repository itself, on its own host, so a page that shows "reported in #2248" links
nowhere else. The crawl carries the reports in every record they name (``explanation.evidence``)
whether or not the entry has a curated text, and ``errcat curate check`` ranks the entries that
have none by how often they were reported: the next one to write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.model.shapes import RecordData

NAME = "evidence.yaml"


@dataclass
class EvidenceSet:
    """The evidence of one dataset: id -> reports (as JSON), the file's digest (None without one)."""

    path: Path
    reports: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    digest: str | None = None


def load(directory: Path, repo: Any, memo: Path | None = None) -> EvidenceSet:
    """The evidence file under a curated dataset directory, validated against ``repo`` (a
    RepoRef: its host, owner and name); CuratedError naming the file and line of the first problem.
    ``memo``: the curated files' memo in the cache (``explanations.read_model``)."""
    from crawler.catalogue.explanations import CuratedError, line_of, node_of, read_model
    from crawler.model.records import EvidenceFile, on_repository

    path = directory / NAME
    out = EvidenceSet(path)
    if not path.is_file():
        return out
    parsed, node, raw = read_model(path, EvidenceFile, memo)

    def line(loc: tuple[Any, ...]) -> int:
        return line_of(node if node is not None else node_of(raw), loc)

    for eid, reports in parsed.root.items():
        seen = set()
        for i, ev in enumerate(reports):
            if not on_repository(ev.url, repo):
                raise CuratedError([f"{path}:{line((eid, i, 'url'))}: {eid}.{i}.url: {ev.url} is not an issue, pull request or discussion of {repo.url}"])
            if ev.url in seen:
                raise CuratedError([f"{path}:{line((eid, i, 'url'))}: {eid}.{i}.url: {ev.url} is listed twice"])
            seen.add(ev.url)
        out.reports[eid] = [ev.model_dump(mode="json") for ev in reports]
    out.digest = hashlib.sha256(raw).hexdigest()
    return out


def evidence_by_id(records: Sequence[RecordData], evidence: EvidenceSet) -> dict[str, list[dict[str, Any]]]:
    """The reports (``explanation.evidence``) of each record the evidence file lists, by id."""
    return {record["id"]: list(reports) for record in records if (reports := evidence.reports.get(record["id"]))}


def issue_number(url: str) -> str:
    """``#2248`` for a link to issue, pull request or discussion 2248 (how pages cite it)."""
    return "#" + url.split("/")[6].split("#")[0]
