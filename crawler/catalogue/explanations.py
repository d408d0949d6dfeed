"""Curated explanations: ``curated/<owner>/<name>/<id>.yaml``, read, validated and merged.

Each file is one ``records.CuratedFile``: the prose sections of a catalogue page plus review
metadata (the template, guards and place the text was written for, and the commit it was checked
at). Files are parsed with a strict YAML loader (a duplicate key is an error, with its line) and
validated by the model (unknown keys, wrong types, a malformed id: the file and the line of the
offending value). Nothing here ever writes a curated file except the explicit ``curate``
commands, which splice new values into the file's text so the prose, its comments and its layout
stay as the curator wrote them.

The crawl reads the whole set (``load_set``), hashes it into the dataset's input digest, and
merges each file into the record with its id (``apply``): a reviewed file whose template and
guards still match gives ``explanation_status: curated``; a draft, or a reviewed file whose code
moved on since (stale), gives ``draft``. Records without a file stay ``absent``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from crawler.base.cachedir import keep
from crawler.base.errors import ConfigError
from crawler.base.layout import dataset_dir
from crawler.catalogue.joined import CuratedPart
from crawler.model.records import ID_RE, CuratedFile
from crawler.model.shapes import RecordData

SUFFIX = ".yaml"
EVIDENCE = "evidence.yaml"  # catalogue.evidence.NAME: beside the curated files, not one of them
DEFAULT_DIR = "curated"
#: A curated file is a page of prose (the longest shipped one is 2.6 KB); anything past this
#: is not one, and PyYAML's pure-Python parser spends about 2 s and 20 MB on each MB of it
#: (an 85 MB file took 200 s and 1.7 GB).
MAX_BYTES = 256 * 1024
#: The deepest structure a curated file has is three levels (``defensive_patterns`` > item >
#: text). PyYAML composes and constructs nodes recursively, so a few hundred levels of ``[[[``
#: are a RecursionError; this stops far below that and far above any real file.
MAX_DEPTH = 32


# --------------------------------------------------------------------------- strict YAML


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML keeps the last one silently) and
    collections nested deeper than ``MAX_DEPTH`` and aliases (``*name``)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            # aliases of aliases grow as the power of their levels (a billion laughs), in every
            # walk of the tree; no curated file needs one
            raise yaml.composer.ComposerError(None, None, "an alias (*name): a curated file spells each value out", self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a plain value", key_node.start_mark) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {seen[key].start_mark.line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _refuse_comment_after_plain_text(text: str, node: yaml.Node | None) -> None:
    """A space and ``#`` inside an unquoted value start a YAML comment: ``seen in #13640 too``
    loads as ``seen in``, silently (prose cites issues this way). A comment on the line of an
    unquoted value is refused, at its line, so the text is quoted instead; comments on lines of
    their own stay allowed. Raises yaml.MarkedYAMLError."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            stack.extend(v for pair in current.value for v in pair)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.ScalarNode) and current.style is None and current.end_mark is not None:
            end = current.end_mark.index
            line_end = text.find("\n", end)
            rest = text[end : len(text) if line_end < 0 else line_end]
            if rest.lstrip(" \t").startswith("#"):
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    "a '#' after a space starts a YAML comment, so the rest of this line is not part of "
                    "the text: quote the value ('...' or \"...\") or write the number without the space",
                    current.end_mark,
                )


def parse_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (for line numbers). Raises yaml.YAMLError."""
    if len(text) > MAX_BYTES:
        raise yaml.YAMLError(f"over {MAX_BYTES} characters: a curated file is a page of prose")
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        _refuse_comment_after_plain_text(text, node)
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, node


def line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int:
    """1-based line of the entry at ``loc`` (a pydantic error location) in the node tree: the key's
    line for a mapping entry, the item's line for a list item, the deepest one that exists."""
    line = node.start_mark.line + 1 if node is not None else 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == part:
                    line, node = k.start_mark.line + 1, v
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


class CuratedError(ConfigError):
    """A curated file that cannot be used; ``problems`` lists every one found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more invalid curated file(s))" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


def read_model(path: Path, model: Any, memo: Path | None = None) -> tuple[Any, yaml.Node | None, bytes]:
    """A data file kept beside the curated files (the foreign list, the evidence), read as
    strictly as they are and validated by ``model`` (a pydantic model class): (the model, the node
    tree for line numbers, the bytes read). CuratedError naming the file and line of the first problem.

    ``memo``: the curated files' memo in the cache (:class:`_Memo`): a file read before with the
    same bytes is not parsed again, and its node tree is None (:func:`node_of` makes it when a
    caller needs a line number)."""
    node = None
    try:
        raw = read_bytes(path)
        known = _Memo(memo, model)
        found = known.get(path.name, raw)
        if found is None:
            data, node = parse_yaml(raw.decode("utf-8"))
            found = model.model_validate(data)
            known.put(path.name, raw, found)
        known.save()
        return found, node, raw
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"]))
        msg = err["msg"].removeprefix("Value error, ")
        raise CuratedError([f"{path}:{line_of(node, err['loc'])}: {where + ': ' if where else ''}{msg}"]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise CuratedError([f"{path}:{mark.line + 1 if mark else 1}: {exc.problem or exc.context}"]) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CuratedError([f"{path}:1: cannot read: {exc}"]) from None


def node_of(raw: bytes) -> yaml.Node | None:
    """The node tree of a data file :func:`read_model` read valid (for a line number)."""
    return parse_yaml(raw.decode("utf-8"))[1]


def parse_file(path: Path, text: str | None = None) -> CuratedFile:
    """One curated file, validated; raises CuratedError naming the file and line."""
    stem = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem
    if not ID_RE.fullmatch(stem):
        raise CuratedError([f"{path}:1: file name must be <id>{SUFFIX}, with the id as 16 lowercase hex digits"])
    try:
        text = read_bytes(path).decode("utf-8") if text is None else text
    except (OSError, UnicodeDecodeError) as exc:
        raise CuratedError([f"{path}:1: cannot read: {exc}"]) from None
    try:
        data, node = parse_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise CuratedError([f"{_where(path, line)}: {exc.problem or exc.context}"]) from None
    except yaml.YAMLError as exc:
        raise CuratedError([f"{path}:1: not valid YAML: {exc}"]) from None
    if not isinstance(data, dict):
        raise CuratedError([f"{path}:1: expected a mapping of sections (id, what_it_means, ..., review)"])
    try:
        entry = CuratedFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        dotted = ".".join(str(p) for p in loc) or "(file)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise CuratedError([f"{_where(path, line_of(node, loc))}: {dotted}: {msg}{more}"]) from None
    if entry.id != stem:
        raise CuratedError([f"{_where(path, line_of(node, ('id',)))}: id {entry.id} does not match the file name {stem}"])
    return entry


def read_bytes(path: Path) -> bytes:
    """A curated file's bytes: a regular file (a FIFO would block the crawl) of at most
    ``MAX_BYTES``, checked before anything is read. CuratedError when it is neither; OSError when
    it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CuratedError([f"{path}:1: not a regular file"])
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_BYTES + 1) if st.st_size <= MAX_BYTES else b""
    finally:
        os.close(fd)
    _check_size(path, max(st.st_size, len(data)))
    return data


def _check_size(path: Path, size: int) -> None:
    if size > MAX_BYTES:
        raise CuratedError([f"{path}:1: {size} bytes, over the limit of {MAX_BYTES} bytes for a curated file (a page of prose)"])


def parse_bytes(path: Path, data: bytes) -> CuratedFile:
    """What a crawl makes of ``data`` as the file at ``path`` (:func:`load_set`): the size limit,
    then :func:`parse_file` (depth, strict YAML, the model, the id). The drafter holds what it is
    about to write to this, so it never leaves a file the crawl refuses. Raises CuratedError."""
    _check_size(path, len(data))
    return parse_file(path, data.decode("utf-8", "surrogateescape"))


# --------------------------------------------------------------------------- the set


@dataclass
class CuratedSet:
    """Every curated file of one dataset (``<root>/<owner>/<name>/``)."""

    directory: Path
    entries: dict[str, CuratedFile] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    digest: str | None = None
    problems: list[str] = field(default_factory=list)
    evidence: Any = None  # catalogue.evidence.EvidenceSet, set by the crawl

    def __len__(self) -> int:
        return len(self.entries)


def load_set(root: Path | None, owner: str, name: str, *, strict: bool = True, memo: Path | None = None) -> CuratedSet:
    """Read and validate every ``*.yaml`` under ``root/owner/name``.

    Every file is read before anything is reported, so one run lists every invalid file;
    ``strict`` raises CuratedError when there is any, otherwise they are left in ``problems``.
    The digest covers each file's name and bytes (None when there is no such directory).
    ``memo``: a file of the cache that keeps each valid file's model by its name and bytes (see
    :class:`_Memo`).
    """
    directory = dataset_dir(root, owner, name) if root is not None else Path("/nonexistent")
    out = CuratedSet(directory=directory)
    if root is None or not directory.is_dir():
        return out
    known = _Memo(memo)
    h = hashlib.sha256()
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or path.is_dir() or path.name == EVIDENCE:
            continue  # evidence.yaml is read (as strictly) by catalogue.evidence
        if not path.name.endswith(SUFFIX):
            out.problems.append(f"{path}:1: not a curated file (expected <id>{SUFFIX})")
            continue
        try:
            data = read_bytes(path)
        except OSError as exc:
            out.problems.append(f"{path}:1: cannot read: {exc.strerror or exc}")
            continue
        except CuratedError as exc:
            out.problems += exc.problems
            continue
        h.update(path.name.encode() + b"\0" + hashlib.sha256(data).digest())
        entry = known.get(path.name, data)
        if entry is None:
            try:
                entry = parse_bytes(path, data)
            except CuratedError as exc:
                out.problems += exc.problems
                continue
            known.put(path.name, data, entry)
        out.entries[entry.id] = entry
        out.paths[entry.id] = path
    out.digest = h.hexdigest()
    known.save()
    if strict and out.problems:
        raise CuratedError(out.problems)
    return out


class _Memo:
    """Valid curated files' models, kept in the cache by a digest of the file's name and bytes
    and of the model's schema: parsing YAML in pure Python is most of an up-to-date crawl's time
    (a hundred files: ~0.4 s). Our own JSON, validated by the model on the way in; a row that
    does not validate, or a memo that cannot be read or written, is parsed as if not there.

    ``model``: the curated files' (``CuratedFile``, rows keyed by their digest alone), or the model
    of a data file beside them (:func:`read_model`: the evidence, the foreign list), whose rows
    share the memo file under keys that start with the model's name and a ``/``; each reader keeps
    the rows of its own files only, and leaves the others' as they are."""

    def __init__(self, path: Path | None, model: Any = None) -> None:
        import orjson

        self.path = path
        self.model = CuratedFile if model is None else model
        self.prefix = "" if model is None else f"{model.__name__}/"
        self.rows: dict[str, str] = {}
        self.used: dict[str, str] = {}
        if path is None:
            return
        try:
            found = orjson.loads(path.read_bytes())
        except (OSError, ValueError):
            return
        if type(found) is dict:
            self.rows = {k: v for k, v in found.items() if type(v) is str}

    def _key(self, name: str, data: bytes) -> str:
        digest = _schema_digest() if self.model is CuratedFile else _model_digest(self.model)
        return self.prefix + hashlib.sha256(digest.encode() + b"\0" + name.encode() + b"\0" + data).hexdigest()

    def _mine(self, key: str) -> bool:
        return key.startswith(self.prefix) if self.prefix else "/" not in key

    def get(self, name: str, data: bytes) -> Any:
        if self.path is None:
            return None
        key = self._key(name, data)
        row = self.rows.get(key)
        if row is None:
            return None
        try:
            entry = self.model.model_validate_json(row)
        except ValidationError:
            return None
        if self.model is CuratedFile and entry.id + SUFFIX != name:
            return None
        self.used[key] = row
        return entry

    def put(self, name: str, data: bytes, entry: Any) -> None:
        if self.path is not None:
            self.used[self._key(name, data)] = entry.model_dump_json()

    def save(self) -> None:
        """Keep the rows of this reader's files only (a curated file edited leaves its old row behind)."""
        import orjson

        if self.path is None:
            return
        rows = {k: v for k, v in self.rows.items() if not self._mine(k)} | self.used
        if rows != self.rows:
            keep(self.path, orjson.dumps(rows, option=orjson.OPT_SORT_KEYS))


#: Bumped when ``parse_yaml`` refuses what it used to accept (2: a comment on the line of an
#: unquoted value), so a memo row of a file read under the older rules is read again.
PARSE_RULES = "2"


@functools.cache
def _model_digest(model: Any) -> str:
    """A data file's model and the parse rules as written here (see :func:`_schema_digest`)."""
    import json

    schema = json.dumps(model.model_json_schema(), sort_keys=True)
    return hashlib.sha256(f"{PARSE_RULES}\0{model.__name__}\0{schema}".encode()).hexdigest()


@functools.cache
def _schema_digest() -> str:
    """The curated model and parse rules as written here: a memo row of another is never read."""
    import json

    schema = json.dumps(CuratedFile.model_json_schema(), sort_keys=True)
    return hashlib.sha256(f"{PARSE_RULES}\0{schema}".encode()).hexdigest()


def default_root(config_path: Path | None) -> Path:
    """``curated/`` next to the config file in use, else in the errcat home (``base.home``)."""
    from crawler.base.home import home

    base = config_path.parent if config_path is not None else home()
    return base / DEFAULT_DIR


# --------------------------------------------------------------------------- merge


def is_stale(entry: CuratedFile, template: str, guards: list[str]) -> list[str]:
    """What changed since the review of an entry whose template and guards are now these:
    'template', 'guards' (empty when nothing did, or when they are an earlier release's code the
    review says the text still holds for, ``review.also``)."""
    if any(code.template == template and list(code.guards) == list(guards) for code in entry.review.also or ()):
        return []
    changed = []
    if entry.review.template != template:
        changed.append("template")
    if list(entry.review.guards) != list(guards):
        changed.append("guards")
    return changed


def sections_digest(entry: CuratedFile, exact: bool = False) -> str:
    """SHA-256 of the text a reader sees (every section and the see-also ids): comments, layout
    and the review block are not the text, so editing only those leaves it the drafter's. Nor is
    white space: each string is taken in its words (:func:`_words`), so re-wrapping a paragraph,
    an extra space or blank line, or an invisible character is no rewrite. ``exact``: the digest
    of the strings as they are, which drafts stamped before this normalisation carry."""
    import json

    sections = entry.model_dump(mode="json", exclude={"id", "review"}, exclude_none=True)
    if not exact:
        sections = _words(sections)
    return hashlib.sha256(json.dumps(sections, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _words(value: Any) -> Any:
    """Every string in ``value`` in Unicode compatibility form (NFKC: a no-break space is a space),
    invisible format characters (zero-width spaces, joiners, bidi marks) dropped, its runs of white
    space one space, stripped."""
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value)
        return " ".join("".join(ch for ch in text if unicodedata.category(ch) != "Cf").split())
    if isinstance(value, list):
        return [_words(v) for v in value]
    if isinstance(value, dict):
        return {k: _words(v) for k, v in value.items()}
    return value


def still_drafted(entry: CuratedFile, digest: str | None) -> bool:
    """Whether ``entry``'s text is the one whose digest a drafter (or an acceptance) stamped: the
    digest of its words, or, stamped before digests were of words, of its exact strings (a file
    written then still reads as it did)."""
    return digest is not None and digest in (sections_digest(entry), sections_digest(entry, exact=True))


def accepted_draft(entry: CuratedFile) -> dict[str, str] | None:
    """``Explanation.accepted_as_is`` for a reviewed file whose text is still the machine draft a
    reviewer accepted as is (its digest is kept in the review); None once a person edited it."""
    review = entry.review
    if not review.accepted_as_is or not still_drafted(entry, review.drafted):
        return None
    return {"drafted_by": "model", "model": review.model} if review.model else {"drafted_by": "facts"}


#: The review statuses whose text a person checked against the code: ``reviewed``, and ``retired``
#: (the error is gone upstream, the text kept: it still explains the releases that raise it).
CHECKED = ("reviewed", "retired")


def status_for(entry: CuratedFile, record: RecordData) -> str:
    """``curated`` only for reviewed (or retired) text whose code has not moved since; otherwise ``draft``."""
    if entry.review.status in CHECKED and not is_stale(entry, record["message"]["text"], record["sites"][0]["facts"]["guards"]):
        return "curated"
    return "draft"


def curated_parts(records: Sequence[RecordData], curated: CuratedSet, related: Mapping[str, list[dict[str, Any]]]) -> dict[str, CuratedPart]:
    """What each curated file gives its record, by id (the records of this commit a file
    explains); curated see-also links go before the computed ``related`` errors (still at most
    ``related.LIMIT``). A retired file (the error is gone upstream, its text kept) explains the
    record of an older release that still raises the error as it was reviewed for (template and
    guards), and nothing else: a crawl of that release gives it ``curated``, and a history keeps
    that record as the retired one's, so a paste in the old wording reaches its text."""
    from crawler.catalogue.related import LIMIT

    by_id = {r["id"]: r for r in records}
    out: dict[str, CuratedPart] = {}
    for eid, entry in curated.entries.items():
        record = by_id.get(eid)
        if record is None:
            continue
        status = status_for(entry, record)
        if entry.review.status == "retired" and status != "curated":
            continue  # reviewed for other code than this release's
        part = CuratedPart(explanation=entry.explanation().model_dump(mode="json"), explanation_status=status)
        if status == "draft" and entry.review.status == "draft" and entry.review.model:
            part["explanation"]["model"] = entry.review.model  # machine-written, not reviewed
        elif status == "draft" and entry.review.status == "reviewed":
            part["explanation"]["stale_since"] = entry.review.commit  # reviewed for other code
        accepted = accepted_draft(entry) if entry.review.status in CHECKED else None
        if accepted is not None:
            part["explanation"]["accepted_as_is"] = accepted  # reviewed, but a machine's text
        links = [{"id": rid, "title": by_id[rid]["title"], "reason": "curated"} for rid in entry.related if rid in by_id and rid != eid]
        if links:
            chosen = {link["id"] for link in links}
            part["related"] = (links + [r for r in related[eid] if r["id"] not in chosen])[:LIMIT]
        out[eid] = part
    return out
