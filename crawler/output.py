"""Write a dataset so that a failed or interrupted run never damages the last good one.

Layout of ``<out>/<owner>/<name>/``::

    manifest.json      what was crawled, counts, skipped files with reasons, versions
    index.json         one summary row per entry
    errors/<id>.json   one full record per entry (the /api/errors/<id> payload)
    errors.jsonl       every record, one per line
    search.json        compact search index: patterns, literal fragments, tokens (see search.py)

Everything is written into a fresh hidden sibling directory, validated there against the JSON
Schemas, and only then swapped in: rename the old dataset aside, rename the new one in, delete
the old. A run killed before the swap leaves a stray temporary directory (removed by the next
run) and the old dataset as it was; one killed between the two renames is repaired by the next
run, which puts the old dataset back before doing anything else.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from .errors import DataError
from .ids import check_id
from .jsonio import dump_line, dump_model
from .models import Index, IndexRow, Manifest, Record
from .search import build_search_index
from .validate import Problem, check

TMP_MARK = ".tmp-"
OLD_MARK = ".old-"


def dataset_dir(out_root: Path, owner: str, name: str) -> Path:
    return out_root / owner / name


def index_for(records: list[Record], repo: str, commit: str) -> Index:
    return Index(
        repo=repo,
        commit=commit,
        entries=[
            IndexRow(
                id=r.id,
                title=r.title,
                exception=r.exception.name,
                kind=r.kind,
                template=r.message.text,
                path=r.location.path,
                line=r.location.line,
                sites=len(r.sites),
                explanation_status=r.explanation_status,
            )
            for r in records
        ],
    )


def recover(target: Path) -> None:
    """Undo the traces of an interrupted run next to ``target``."""
    parent = target.parent
    if not parent.is_dir():
        return
    olds = sorted(parent.glob(f".{target.name}{OLD_MARK}*"))
    if olds and not target.exists():
        os.replace(olds[-1], target)
        olds = olds[:-1]
    for stray in [*olds, *parent.glob(f".{target.name}{TMP_MARK}*")]:
        shutil.rmtree(stray, ignore_errors=True)


def render_dataset(records: list[Record], manifest: Manifest, index: Index) -> dict[str, bytes]:
    """Every file of the dataset as bytes, by relative path, validated; raises DataError if invalid."""
    files: dict[str, bytes] = {}
    problems: list[Problem] = []
    for name, model, schema in (("manifest.json", manifest, "manifest"), ("index.json", index, "index")):
        files[name] = dump_model(model)
        problems += check(schema, json.loads(files[name]), name, engine="fast")
    lines = []
    for record in records:
        check_id(record.id)
        rel = f"errors/{record.id}.json"
        if rel in files:
            raise DataError(f"two records with id {record.id}")
        files[rel] = dump_model(record)
        problems += check("record", json.loads(files[rel]), rel, engine="fast")
        lines.append(dump_line(record))
    files["errors.jsonl"] = b"".join(lines)
    files["search.json"] = dump_line(build_search_index(records, index.repo, index.commit))
    problems += check("search", json.loads(files["search.json"]), "search.json", engine="fast")
    if problems:
        listing = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise DataError(f"{len(problems)} schema problem(s); nothing was written:\n{listing}{more}")
    return files


def write_dataset(target: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` into a temporary sibling of ``target``, then swap it in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    recover(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}{TMP_MARK}", dir=target.parent))
    try:
        (tmp / "errors").mkdir()
        for rel, data in sorted(files.items()):
            (tmp / rel).write_bytes(data)
        os.chmod(tmp, 0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}{OLD_MARK}", dir=target.parent))
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target
