"""JSON Schemas generated from the models: what consumers validate against.

``errcat schema`` writes them under ``schema/``; a test fails when the committed files differ
from what the models generate, so the schema can never drift from the code.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crawler.model.diff import DiffReport
from crawler.model.records import SCHEMA_VERSION, CuratedFile, CuratedLinks, EvidenceFile, ForeignList, Index, Manifest, MatchResult, Record
from crawler.model.search import SearchIndex

DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: schema name -> model; the file is ``schema/<name>.schema.json``.
MODELS: dict[str, type[BaseModel]] = {
    "record": Record,
    "index": Index,
    "manifest": Manifest,
    "search": SearchIndex,
    "diff": DiffReport,
    "curated": CuratedFile,
    "foreign": ForeignList,
    "evidence": EvidenceFile,
    "lineage": CuratedLinks,
    "match": MatchResult,
}


@cache
def schema_for(name: str) -> dict[str, Any]:
    model = MODELS[name]
    body = model.model_json_schema(mode="serialization")
    return {"$schema": DIALECT, "$id": f"urn:errcat:schema:{SCHEMA_VERSION}:{name}", **body}


def schema_text(name: str) -> str:
    return json.dumps(schema_for(name), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in MODELS:
        path = directory / f"{name}.schema.json"
        path.write_text(schema_text(name), encoding="utf-8")
        written.append(path)
    return written
