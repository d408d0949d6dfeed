"""Edits of curated files: review metadata, splicing it into a file's text, moving and marking files, atomic writes."""

from __future__ import annotations

from pathlib import Path

import yaml

from crawler.base.errors import UsageError
from crawler.base.files import write_file
from crawler.catalogue.explanations import SUFFIX, parse_file, parse_yaml, sections_digest
from crawler.curate.check import (
    check_entry_id,
    curated_dir,
    dataset_with,
    datasets_under,
)
from crawler.curate.reviews import review_for
from crawler.curate.unedited import keep_acceptance, unedited
from crawler.curate.yamlio import dump_yaml
from crawler.model.records import CuratedReview, ReviewedCode
from crawler.publish.dataset import Dataset


def write_text_atomic(path: Path, text: str) -> None:
    write_file(path, text.encode("utf-8"))


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


def curated_file(root: Path, ds: Dataset, entry_id: str) -> Path:
    """Where the curated explanation of an entry of ``ds`` lives under the curated root."""
    return curated_dir(root, ds) / f"{entry_id}{SUFFIX}"


def move(root: Path, data: Path, old: str, new: str) -> tuple[Path, Path, CuratedReview]:
    """Relink ``old``'s file to entry ``new``: the text moves unchanged; the review metadata now
    records the new entry's template and guards. Refuses to overwrite an existing file."""
    check_entry_id(old)
    ds = dataset_with(data, new)
    src, dst = curated_file(root, ds, old), curated_file(root, ds, new)
    if not src.is_file():
        raise UsageError(f"no curated file {src}")
    if dst.exists():
        raise UsageError(f"{dst} already exists; merge the two by hand (no curated text is overwritten)")
    entry = parse_file(src)
    review = review_for(ds.by_id[new].model_dump(mode="json"), ds.commit, entry.review.status if entry.review.status != "retired" else "draft")
    if review.status == "draft":  # still the drafter's text, as it was before the move
        review = review.model_copy(update={"model": entry.review.model, "drafted": entry.review.drafted})
    elif review.status == "reviewed":
        review = keep_acceptance(entry, review)
    text = splice(src.read_text(encoding="utf-8"), new_id=new, review=review)
    parse_file(dst, text)  # the result must be valid before anything changes on disk
    write_text_atomic(dst, text)
    src.unlink()
    return src, dst, entry.review


def mark(root: Path, data: Path, entry_id: str, status: str, note: str | None = None, accept_as_is: bool = False, keep_earlier: bool = False) -> Path:
    """``review``: the file now records the entry's current template, guards and commit, status
    reviewed. ``retire``: status retired (the entry may be gone from the dataset). A draft whose
    text is still the drafter's is reviewed only with ``accept_as_is`` (a person read it and
    accepts it unedited), which the review records. ``keep_earlier``: a reviewed text re-read
    for changed code that still holds for the code it was reviewed for keeps that code (and any
    kept before) in ``review.also``, so a crawl of the earlier release shows it curated too."""
    check_entry_id(entry_id)
    datasets = datasets_under(data)
    ds = next((d for d in datasets if entry_id in d.by_id), None)
    if ds is None:
        if status != "retired":
            raise UsageError(f"no entry {entry_id} in any dataset under {data}; an orphan is moved or retired, not reviewed")
        ds = next((d for d in datasets if curated_file(root, d, entry_id).is_file()), None)
        if ds is None:
            raise UsageError(f"no curated file {entry_id}{SUFFIX} for any dataset under {data}")
    path = curated_file(root, ds, entry_id)
    if not path.is_file():
        raise UsageError(f"no curated file {path}")
    entry = parse_file(path)
    if status == "retired":
        review = entry.review.model_copy(update={"status": "retired", "note": note or entry.review.note})
    else:
        record = ds.by_id[entry_id].model_dump(mode="json")
        drafter = unedited(entry, record, ds.commit)
        if drafter is not None and not accept_as_is:
            raise UsageError(
                f"{path} is still the text {drafter} wrote, unedited: rewrite it against the code first, "
                "or pass --read-and-accept-as-is if you read it and accept it as written"
            )
        review = review_for(record, ds.commit, "reviewed", note or entry.review.note)
        if drafter is not None:  # who drafted it and the digest of the text accepted stay, so an edit after it shows
            review = review.model_copy(update={"accepted_as_is": True, "model": entry.review.model, "drafted": sections_digest(entry)})
        elif entry.review.status == "reviewed":
            review = keep_acceptance(entry, review)
        if keep_earlier:
            review = review.model_copy(update={"also": _earlier_code(entry.review, review)})
    text = splice(path.read_text(encoding="utf-8"), review=review)
    if status == "reviewed":
        text = without_draft_header(text)
    parse_file(path, text)
    write_text_atomic(path, text)
    return path


def _earlier_code(was: CuratedReview, now: CuratedReview) -> list[ReviewedCode]:
    """The code ``was`` reviewed (and kept) for, and not ``now``'s, oldest first, at most 16: what a
    review that keeps the earlier code records in ``review.also``. Only a reviewed text's code."""
    if was.status != "reviewed":
        raise UsageError("--still-holds-for-earlier keeps the code a reviewed text was read for; this file is not reviewed")
    codes = [*(was.also or ()), ReviewedCode(commit=was.commit, template=was.template, guards=list(was.guards))]
    kept: list[ReviewedCode] = []
    for code in codes:
        same_as_now = code.template == now.template and list(code.guards) == list(now.guards)
        if not same_as_now and all((k.template, k.guards) != (code.template, code.guards) for k in kept):
            kept.append(code)
    return kept[-16:]


#: The comment ``curate draft`` puts first in a draft; a review makes it false.
_DRAFT_HEADER = ("# Draft for ", "# Machine-written by ")


def without_draft_header(text: str) -> str:
    """``text`` without the leading comment block a draft was written with (the curator's own
    comments, wherever they are, stay)."""
    if not text.startswith(_DRAFT_HEADER):
        return text
    lines = text.splitlines(keepends=True)
    for end, line in enumerate(lines[:3]):  # the header ends with the line that names the review
        if not line.startswith("#"):
            break
        if "errcat curate review" in line:
            return "".join(lines[end + 1 :])
    return text
