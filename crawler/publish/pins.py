"""Stable records: a record names the commit at which its content last changed.

A record's content is everything it says except where it was last found unchanged: the
provenance's ``commit``, ``commit_date``, ``upstream_commit``, ``source`` and ``permalinks``, and
the permalinks themselves (``location``, every site, every reproduction), which name that same
commit. A crawl with the previous dataset in place re-pins each new record at the commit the
previous one names and keeps it when the bytes are then exactly the previous file's: the
record's content did not change, so its file does not either, and its permalinks show the same
code at the same lines (the snippets and lines are part of the content).

The previous dataset is hostile input: nothing of it is kept that the crawl did not compare byte
for byte with what it would write itself. The only thing taken from it is the commit a record
names, and that commit must be one the crawled repository has, an ancestor of (or the same as)
the crawled commit, with the committer date the record says (``Verifier``). Anything else, a
damaged or edited file, a commit the repository does not have, another source, gives the fresh
record, pinned at the crawled commit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from crawler.base.jsonio import dumps
from crawler.catalogue.entries import Identity
from crawler.publish.dataset import PreviousRecord

#: A commit's committer date when the crawled repository has it as an ancestor of (or as) the
#: crawled commit, else None (a source that cannot tell, a wheel, keeps no pin).
Verifier = Callable[[str], "str | None"]


def _links_of(identity: Identity, commit: str) -> dict[str, str]:
    """The permalink basis of a record pinned at ``commit``: the crawled commit's basis with the
    commit in place of the crawled one (only a basis that names the crawled commit itself moves)."""
    links = identity.links
    if links["basis"] == "commit" and links["rev"] == identity.commit:
        return {"basis": "commit", "rev": commit}
    return links


def repin(record: dict[str, Any], identity: Identity, commit: str, commit_date: str) -> dict[str, Any]:
    """A copy of a fresh record pinned at ``commit``: its provenance and every permalink name it.
    Nothing is shared with ``record`` that this changes."""
    links = _links_of(identity, commit)
    at = dataclasses.replace(identity, permalinks=links)
    location = {**record["location"], "permalink": at.permalink(record["location"]["path"], record["location"]["line"])}
    sites = [{**s, "permalink": at.permalink(s["path"], s["line"])} for s in record["sites"]]
    meaning = record["meaning"]
    if meaning["reproductions"]:
        meaning = {**meaning, "reproductions": [{**r, "permalink": at.permalink(r["path"], r["line"])}
                                                for r in meaning["reproductions"]]}
    provenance = {**record["provenance"], "commit": commit, "commit_date": commit_date, "permalinks": links}
    return {**record, "location": location, "sites": sites, "meaning": meaning, "provenance": provenance}


def pin(records: list[dict[str, Any]], previous: dict[str, PreviousRecord], identity: Identity,
        verify: Verifier | None) -> dict[str, PreviousRecord]:
    """Re-pin, in place in ``records``, every record whose content is the previous dataset's
    record of its id; the previous records kept so (their bytes are what the writer would write).

    A previous record is a candidate only when it is of the same source, its permalinks named
    its own commit the way the crawled commit's do, and ``verify`` vouches for its commit and
    date. A record already pinned at the crawled commit is kept when its bytes are unchanged.
    """
    kept: dict[str, PreviousRecord] = {}
    if not previous:
        return kept
    fresh_links = identity.links
    if identity.upstream_commit is not None or (fresh_links["basis"] == "commit" and fresh_links["rev"] != identity.commit):
        return kept  # permalinks name another commit than the crawled one: nothing to pin
    vouched: dict[str, str | None] = {}
    for i, record in enumerate(records):
        old = previous.get(record["id"])
        if old is None:
            continue
        prov = old.provenance
        if prov.source != identity.source or prov.repo != identity.slug or prov.upstream_commit is not None:
            continue
        if prov.permalinks.model_dump(mode="json") != _links_of(identity, prov.commit):
            continue
        if prov.commit == identity.commit:
            candidate = record
            if prov.commit_date != identity.commit_date:
                continue
        else:
            if prov.commit not in vouched:
                vouched[prov.commit] = verify(prov.commit) if verify is not None else None
            if vouched[prov.commit] is None or vouched[prov.commit] != prov.commit_date:
                continue
            candidate = repin(record, identity, prov.commit, prov.commit_date)
        if dumps(candidate) == old.data:
            records[i] = candidate
            kept[record["id"]] = old
    return kept
