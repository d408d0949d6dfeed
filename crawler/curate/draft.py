"""``errcat curate draft``: one entry's draft, from the facts or by a model, never over a reviewed file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from crawler.base.errors import UsageError
from crawler.catalogue.explanations import CuratedError, parse_file
from crawler.curate.check import dataset_with
from crawler.curate.edit import curated_file, write_text_atomic
from crawler.curate.from_facts import draft_from_facts
from crawler.curate.llm import Endpoint, LLMFailure
from crawler.curate.unedited import stamped
from crawler.curate.yamlio import dump_yaml


def draft(
    root: Path,
    data: Path,
    entry_id: str,
    endpoint: Endpoint | None = None,
    model: str | None = None,
    repo: str | None = None,
    cache_dir: Path | None = None,
    link_hosts: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """Write ``<id>.yaml`` as a draft (from the facts, or by ``endpoint``'s model, checked like
    ``draft --all``'s: no key, no invented names, no foreign links, a file the crawl reads);
    never over a reviewed or retired file."""
    from crawler.curate.draft_all import draft_one, links_of, vocabulary_of

    ds = dataset_with(data, entry_id)
    path = curated_file(root, ds, entry_id)
    if path.exists():
        try:
            existing = parse_file(path)
        except CuratedError:
            raise UsageError(f"{path} exists and is not valid; fix or remove it by hand") from None
        if existing.review.status != "draft":
            raise UsageError(f"{path} is {existing.review.status}; a draft never overwrites it")
    record = ds.by_id[entry_id].model_dump(mode="json")
    if endpoint is None:
        body = stamped(draft_from_facts(record, ds.commit)).model_dump(mode="json", exclude_none=True)
        header = f"# Draft for {record['title']!r}: rewrite it, check it against the code, then `errcat curate review {entry_id}`.\n"
        write_text_atomic(path, header + dump_yaml(body))
        return path
    try:
        model = model or endpoint.first_model()
        vocabulary = vocabulary_of(repo, ds.manifest.commit, ds.manifest.repo, cache_dir)
        text = draft_one(record, ds.commit, endpoint, model, vocabulary, path, links_of(ds.manifest.repo, link_hosts or {}))
    except LLMFailure as failure:
        raise UsageError(f"--llm {endpoint.base}: {failure.reason}") from None
    write_text_atomic(path, text)
    return path
