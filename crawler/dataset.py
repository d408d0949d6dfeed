"""Reading a written dataset back: what ``show`` (and consumers of the library) load."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .errors import DataError, UsageError
from .models import ID_PREFIX_RE, Manifest, Record
from .validate import find_datasets


def load_manifest(dataset: Path) -> Manifest:
    try:
        return Manifest.model_validate_json((dataset / "manifest.json").read_bytes())
    except (OSError, ValidationError) as exc:
        raise DataError(f"{dataset}/manifest.json is not a valid manifest: {str(exc).splitlines()[0]}") from None


def load_record(path: Path) -> Record:
    try:
        return Record.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise DataError(f"{path} is not a valid record: {str(exc).splitlines()[0]}") from None


def find_record(root: Path, entry_id: str) -> tuple[Path, Record]:
    """The record with this id, or the one whose id starts with this prefix (at least 4 digits)."""
    if not ID_PREFIX_RE.fullmatch(entry_id):
        raise UsageError(f"not an entry id (4 to 16 lowercase hex digits): {entry_id!r}")
    if not root.is_dir():
        raise UsageError(f"no such directory: {root}")
    matches: list[Path] = []
    for dataset in find_datasets(root):
        exact = dataset / "errors" / f"{entry_id}.json"
        if exact.is_file():
            matches.append(exact)
        elif len(entry_id) < 16:
            matches += sorted((dataset / "errors").glob(f"{entry_id}*.json"))
    if not matches:
        raise UsageError(f"no entry {entry_id} under {root}")
    if len(matches) > 1:
        raise UsageError(f"{entry_id} is ambiguous: " + ", ".join(p.stem for p in matches[:5]))
    return matches[0], load_record(matches[0])


def load_records(dataset: Path) -> list[Record]:
    """Every record of a dataset, from its JSONL file, in id order."""
    try:
        lines = (dataset / "errors.jsonl").read_bytes().splitlines()
    except OSError as exc:
        raise DataError(f"{dataset}/errors.jsonl cannot be read: {exc.strerror or exc}") from None
    records = []
    for n, line in enumerate(lines, start=1):
        try:
            records.append(Record.model_validate_json(line))
        except ValidationError as exc:
            raise DataError(f"{dataset}/errors.jsonl:{n} is not a valid record: {str(exc).splitlines()[0]}") from None
    return records
