"""The record files this errcat has validated against its record schema, by SHA-256 of their bytes.

Validation is a function of the bytes and the schema alone, so a record file whose exact bytes
passed once need not be checked again: a crawl that keeps most records unchanged (``pins``)
validates only the ones it changed. The digests live in the cache directory, in one file per
record schema (a changed schema starts an empty one); the cache is errcat's own, like the
extraction results, and a damaged or missing file only costs validating again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from crawler.model.schemas import schema_for

#: Digests kept at most (32 bytes each, 12.8 MB): a sync of vLLM's whole history remembers ~85,000
#: (its record files, their bare forms and its lines), so this holds four such histories, or one
#: growing for years; past it the file starts over from the digests being remembered.
MAX_DIGESTS = 400_000


def _name() -> str:
    schema = orjson.dumps(schema_for("record"), option=orjson.OPT_SORT_KEYS)
    return f"validated-{hashlib.sha256(schema).hexdigest()[:16]}.bin"


def load(cache_dir: Path) -> frozenset[bytes]:
    """The digests recorded for this record schema; none when the file is missing or damaged."""
    try:
        data = (cache_dir / _name()).read_bytes()
    except OSError:
        return frozenset()
    if len(data) % 32 or len(data) > 32 * MAX_DIGESTS:
        return frozenset()
    return frozenset(data[i : i + 32] for i in range(0, len(data), 32))


def remember(cache_dir: Path, known: frozenset[bytes], digests: list[bytes]) -> None:
    """Add the digests of record files just validated (and written); failures are ignored."""
    from crawler.base.cachedir import keep

    new = [d for d in dict.fromkeys(digests) if d not in known]
    if not new:
        return
    kept = sorted(known) if len(known) + len(new) <= MAX_DIGESTS else []
    keep(cache_dir / _name(), b"".join(kept + new))
