"""Take a catalogue made by another job into the output directory, trusting nothing in it.

The sync workflow crawls in a job that can only read, and opens the pull request in a job that
can write. What the first hands the second (an artifact: the dataset and its changelog) is
untrusted input there: whatever wrote it had read hostile code. So ``adopt`` executes nothing
and follows nothing from it:

* the artifact's tree must be the one layout a crawl writes: ``output/<owner>/<name>/`` holding
  ``manifest.json``, ``index.json``, ``search.json``, ``errors.jsonl.gz``, ``errors/<id>.json``
  and ``foreign.json`` (the curated list of errors the upstream does not raise),
  plus ``changelog.md`` (and ``diff.json``) at the top; directories and regular files only (a
  symlink, FIFO or device is refused before anything is read), sizes and counts bounded;
* exactly one dataset, and it must be the configured upstream's (its directory and its manifest);
* every document must pass the schemas and the dataset's own cross-checks (``validate``), and
  its files must hash to the manifest's ``content_digest`` (which a forger can make again, so:);
* the manifest must name the configured upstream's URL, and the dataset must read as the
  consumer commands read it (``dataset.read_consumed``, the one reader ``render`` uses too):
  every record of the manifest's repository with its links on it, no id twice, each record file
  its line's record, index.json and search.json of the manifest's repository and commit, and
  the manifest's counts those the records make;
* the changelog must be UTF-8 text without control characters, short enough for a pull request
  body (GitHub takes 65,536 characters);
* the drafts a sync wrote through the repository's endpoint (``curated/<owner>/<name>/<id>.yaml``,
  of the same dataset only) must each be what a crawl reads as a curated file
  (``explanations.parse_bytes``: size, depth, the model, its id its name's), ``status: draft``
  with the model that wrote it, of an entry of the dataset whose record carries it as a draft;
  each is written to ``CURATED/<owner>/<name>/<id>.yaml`` only where no file is (a curated text
  merged meanwhile stays; the next sync's catalogue follows it);
* the dataset is written only to ``OUT/<owner>/<name>/`` (the name checked above), through the
  same atomic writer as a crawl; the changelog only where the caller says.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from crawler.base.dataset_files import ERRORS, MANIFEST, RECORD_FILE, TOP_LEVEL
from crawler.base.errors import DataError
from crawler.base.layout import dataset_dir
from crawler.base.progress import Progress, quiet
from crawler.base.sink import BIDI_CHARS, visible
from crawler.model.records import ID_HEX
from crawler.publish.dataset import read_consumed
from crawler.publish.validate import validate_dataset
from crawler.publish.writer import content_digest, write_dataset
from crawler.versions.sync import check_output_commit

_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
#: A file of a dataset in an artifact: one of ``base.dataset_files``'s, a record's named by an id.
_FILES = "|".join([*(re.escape(name) for name in sorted(TOP_LEVEL)), re.escape(RECORD_FILE).replace(re.escape("{id}"), ID_HEX)])
DATASET_FILE = re.compile(rf"output/(?P<owner>{_PART})/(?P<name>{_PART})/(?:{_FILES})")
DATASET_DIR = re.compile(rf"output(?:/{_PART}(?:/{_PART}(?:/{re.escape(ERRORS)})?)?)?|curated(?:/{_PART}(?:/{_PART})?)?")
DRAFT_FILE = re.compile(rf"curated/(?P<owner>{_PART})/(?P<name>{_PART})/(?P<id>{ID_HEX})\.yaml")
#: A draft is a page of prose; a sync drafts a bounded number.
MAX_DRAFT_BYTES = 256 * 1024
MAX_DRAFTS = 1_000
TOP_FILES = ("changelog.md", "diff.json")

MAX_FILE_BYTES = 512 * 2**20
MAX_TOTAL_BYTES = 2 * 2**30
MAX_FILES = 200_000
MAX_CHANGELOG_CHARS = 65_536
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{BIDI_CHARS}]")  # every bidi control the sink knows


@dataclass
class Adopted:
    target: Path
    commit: str
    changelog: str
    #: the drafts written under CURATED, and those left out because a file was there
    drafts: list[Path] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _refuse(rel: str, why: str) -> DataError:
    return DataError(f"refusing the artifact: {rel!r} {why}")


def scan(artifact: Path) -> dict[str, int]:
    """Every regular file of the artifact by relative path (with its size), if the tree is the
    allowed layout; otherwise DataError naming the first thing out of place."""
    files: dict[str, int] = {}
    total = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(artifact / rel_dir if rel_dir else artifact) as entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if not DATASET_DIR.fullmatch(rel):
                        raise _refuse(rel, "is not a directory a dataset has")
                    stack.append(rel)
                elif not stat.S_ISREG(mode):
                    raise _refuse(rel, "is not a regular file (a symlink, FIFO or device)")
                elif not (DATASET_FILE.fullmatch(rel) or DRAFT_FILE.fullmatch(rel) or rel in TOP_FILES):
                    raise _refuse(rel, "is not a file a dataset has")
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    total += size
                    if size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES or len(files) >= MAX_FILES:
                        raise _refuse(rel, "takes the artifact over its size limits")
                    files[rel] = size
    return files


def _text(data: bytes, what: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(what, f"is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if len(text) > MAX_CHANGELOG_CHARS:
        raise _refuse(what, f"is longer than a pull request body ({len(text):,} > {MAX_CHANGELOG_CHARS:,} characters)")
    bad = _CONTROL.search(text)
    if bad:
        raise _refuse(what, f"holds the control character U+{ord(bad.group()):04X}")
    return text


def _drafts(artifact: Path, files: dict[str, int], owner: str, name: str, records: dict[str, Any]) -> dict[str, bytes]:
    """The artifact's drafts by id, each checked (see the module); DataError at the first that is not one."""
    from crawler.catalogue.explanations import CuratedError, parse_bytes

    found = {rel: m for rel, m in ((rel, DRAFT_FILE.fullmatch(rel)) for rel in sorted(files)) if m}
    if len(found) > MAX_DRAFTS:
        raise DataError(f"refusing the artifact: {len(found):,} drafts, more than a sync writes ({MAX_DRAFTS:,})")
    drafts: dict[str, bytes] = {}
    for rel, m in found.items():
        if m.group("owner", "name") != (owner, name):
            raise _refuse(rel, f"is a draft for another dataset than {owner}/{name}")
        if files[rel] > MAX_DRAFT_BYTES:
            raise _refuse(rel, f"is larger than a draft ({files[rel]:,} > {MAX_DRAFT_BYTES:,} bytes)")
        data = (artifact / rel).read_bytes()
        try:
            entry = parse_bytes(Path(rel), data)
        except CuratedError as exc:
            raise _refuse(rel, f"is not a curated file a crawl reads: {exc.problems[0]}") from None
        if entry.review.status != "draft" or not entry.review.model:
            raise _refuse(rel, f"is not a machine-written draft (status {entry.review.status}): only drafts travel with a sync")
        record = records.get(m.group("id"))
        if record is None:
            raise _refuse(rel, "drafts no entry of the dataset")
        if record.explanation_status != "draft" or record.explanation is None or record.explanation.model != entry.review.model:
            raise _refuse(rel, "is not the draft the dataset's record carries")
        drafts[m.group("id")] = data
    return drafts


def adopt(
    artifact: Path,
    out: Path,
    owner: str,
    name: str,
    changelog: Path | None = None,
    progress: Progress = quiet,
    url: str | None = None,
    curated: Path | None = None,
) -> Adopted:
    """Check the artifact and write its dataset to ``OUT/<owner>/<name>/`` (and its changelog,
    and its drafts to ``CURATED/<owner>/<name>/``); ``url``: the upstream's, which the manifest
    must name (its permalinks' host is that one's)."""
    if not artifact.is_dir() or artifact.is_symlink():
        raise DataError(f"refusing the artifact: {visible(str(artifact))} is not a directory")
    files = scan(artifact)
    found = sorted({m.group("owner", "name") for m in map(DATASET_FILE.fullmatch, files) if m})
    if found != [(owner, name)]:
        shown = ", ".join("/".join(f) for f in found) or "none"
        raise DataError(f"refusing the artifact: it must hold the dataset of {owner}/{name} alone, not: {shown}")
    if "changelog.md" not in files:
        raise DataError("refusing the artifact: it has no changelog.md")
    text = _text((artifact / "changelog.md").read_bytes(), "changelog.md")

    source = artifact / "output" / owner / name
    problems = validate_dataset(source, "fast", progress)
    if problems:
        raise DataError(f"refusing the artifact: {problems.total:,} problem(s) in its dataset, the first: {problems[0]}")
    prefix = f"output/{owner}/{name}/"
    data = {rel[len(prefix) :]: (artifact / rel).read_bytes() for rel in sorted(files) if rel.startswith(prefix)}
    manifest = orjson.loads(data[MANIFEST])  # schema-valid: the fields below exist and are typed
    repo = manifest["repo"]
    if (repo["owner"], repo["name"]) != (owner, name) or (url is not None and repo["url"] != url):
        raise DataError(f"refusing the artifact: its manifest names {visible(repo['url'])} ({repo['owner']}/{repo['name']}), not {url or f'{owner}/{name}'}")
    if manifest.get("content_digest") != content_digest(data):
        raise DataError("refusing the artifact: its files do not hash to the manifest's content_digest")
    try:
        # What render, match and show would refuse in it, refused now (the one reader they use).
        consumed = read_consumed(source, progress)
        # The commit goes to $GITHUB_OUTPUT and the commit message: checked before anything is written.
        check_output_commit(manifest["commit"])
    except DataError as exc:
        raise DataError(f"refusing the artifact: {exc}") from None
    drafts = _drafts(artifact, files, owner, name, {r.id: r for r in consumed.records})
    if drafts and curated is None:
        raise DataError("refusing the artifact: it holds drafts and no curated directory was given for them")
    target = dataset_dir(out, owner, name)
    progress(f"writing {target}")
    write_dataset(target, data)
    adopted = Adopted(target, manifest["commit"], text)
    if drafts and curated is not None:
        from crawler.base.files import write_file

        for entry_id, body in sorted(drafts.items()):
            path = curated / owner / name / f"{entry_id}.yaml"
            if path.exists() or path.is_symlink():
                adopted.kept.append(entry_id)
                progress(f"kept {path}: a file is there (the draft of {entry_id} is not taken)")
                continue
            write_file(path, body)
            adopted.drafts.append(path)
    if changelog is not None:
        changelog.parent.mkdir(parents=True, exist_ok=True)
        changelog.write_text(text, encoding="utf-8")
    return adopted
