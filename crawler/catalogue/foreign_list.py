"""Errors the crawled project does not raise: ``curated/<owner>/<name>/foreign/errors.yaml``.

Users of vLLM paste torch's ``CUDA out of memory. Tried to allocate``, CUDA's ``illegal memory
access`` or transformers' ``does not recognize this architecture`` as often as vLLM's own errors.
The curated list says how to recognise each (literal text in order, never a regular expression:
the list is data, and the text it is tried on is whatever the user pasted) and what it usually
means there. The crawl validates it strictly and copies it into the dataset as ``foreign.json``;
``errcat match`` and the site answer "not raised by vLLM" with it instead of a wrong entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CURATED = Path("foreign") / "errors.yaml"


def load_curated(directory: Path, memo: Path | None = None) -> Any:
    """The foreign list under a curated dataset directory (None if it has none); CuratedError
    naming the file and line of the first problem (strict YAML: no duplicate keys, no tags)."""
    from crawler.catalogue.explanations import read_model
    from crawler.model.records import ForeignList

    path = directory / CURATED
    if not path.is_file():
        return None
    return read_model(path, ForeignList, memo)[0]
