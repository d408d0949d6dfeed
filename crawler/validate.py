"""Validate a dataset the way an outside consumer would: the JSON Schemas and a standard validator.

Two engines implement the same JSON Schema 2020-12 check: ``reference`` is the Python
jsonschema library (what most consumers use, and what ``errcat validate`` runs by default);
``fast`` is jsonschema-rs, about a hundred times faster, which the crawl uses to check every
record it writes without the check costing more than the crawl itself (~1.2 ms a record with
the reference engine, 10k records on vLLM). A test shows both report the same problems.

Every problem is collected, not just the first: one per schema error, with the file and the JSON
pointer of the offending value, plus the dataset's own consistency (the index, the record files
and the JSONL dataset name the same ids; a record file is named by its id).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import jsonschema_rs

from .models import ID_RE
from .schemas import schema_for


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    pointer: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}#{self.pointer}" if self.pointer else self.file
        return f"{where}: {self.message}"


@cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator  # the reference engine; the crawl never needs it

    schema = schema_for(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@cache
def fast_validator(name: str) -> Any:
    return jsonschema_rs.validator_for(schema_for(name))


def pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


ENGINES = ("reference", "fast")


def check(name: str, data: Any, file: str, engine: str = "reference") -> list[Problem]:
    """Schema problems of one document, ordered by location."""
    if engine == "fast":
        errors = ((err.instance_path, err.message) for err in fast_validator(name).iter_errors(data))
    else:
        errors = ((err.absolute_path, err.message) for err in validator(name).iter_errors(data))
    return sorted(Problem(file, pointer(path), message) for path, message in errors)


def _load(path: Path, label: str) -> tuple[Any, list[Problem]]:
    try:
        return json.loads(path.read_bytes()), []
    except FileNotFoundError:
        return None, [Problem(label, "", "missing")]
    except (ValueError, UnicodeDecodeError) as exc:
        return None, [Problem(label, "", f"not valid JSON: {exc}")]


def validate_dataset(directory: Path, engine: str = "reference") -> list[Problem]:
    """Every problem in one dataset directory (the one holding manifest.json)."""
    problems: list[Problem] = []
    base = directory

    def label(path: Path) -> str:
        return path.relative_to(base).as_posix()

    manifest, found = _load(directory / "manifest.json", "manifest.json")
    problems += found or check("manifest", manifest, "manifest.json", engine)
    index, found = _load(directory / "index.json", "index.json")
    problems += found or check("index", index, "index.json", engine)
    if (directory / "search.json").exists():  # datasets written before errcat had it lack it
        search, found = _load(directory / "search.json", "search.json")
        problems += found or check("search", search, "search.json", engine)

    record_ids: set[str] = set()
    errors_dir = directory / "errors"
    for path in sorted(errors_dir.glob("*.json")) if errors_dir.is_dir() else []:
        data, found = _load(path, label(path))
        if found:
            problems += found
            continue
        problems += check("record", data, label(path), engine)
        if not ID_RE.fullmatch(path.stem) or not isinstance(data, dict) or data.get("id") != path.stem:
            problems.append(Problem(label(path), "/id", "file name is not the record's id"))
        record_ids.add(path.stem)

    jsonl_ids: set[str] = set()
    jsonl = directory / "errors.jsonl"
    if not jsonl.is_file():
        problems.append(Problem("errors.jsonl", "", "missing"))
    else:
        for n, line in enumerate(jsonl.read_bytes().splitlines(), start=1):
            where = f"errors.jsonl:{n}"
            try:
                data = json.loads(line)
            except ValueError as exc:
                problems.append(Problem(where, "", f"not valid JSON: {exc}"))
                continue
            problems += check("record", data, where, engine)
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                jsonl_ids.add(data["id"])

    if isinstance(index, dict) and isinstance(index.get("entries"), list):
        index_ids = {row.get("id") for row in index["entries"] if isinstance(row, dict)}
        for eid in sorted(index_ids - record_ids, key=str):
            problems.append(Problem("index.json", "/entries", f"{eid} has no file errors/{eid}.json"))
        for eid in sorted(record_ids - index_ids):
            problems.append(Problem(f"errors/{eid}.json", "", "not listed in index.json"))
        for eid in sorted(index_ids ^ jsonl_ids, key=str):
            problems.append(Problem("errors.jsonl", "", f"{eid} is in one of index.json and errors.jsonl only"))
    return problems


def find_datasets(root: Path) -> Iterator[Path]:
    """Dataset directories under root (root itself when it holds a manifest)."""
    if (root / "manifest.json").is_file():
        yield root
        return
    for manifest in sorted(root.rglob("manifest.json")):
        if not any(part.startswith(".") for part in manifest.relative_to(root).parts):
            yield manifest.parent
