"""The repo-wide joins of the derived meaning that need the whole repository: callers (from the
call graph) and reproductions (from the upstream's tests), run where records are built."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from crawler.catalogue.callers import Graph
from crawler.catalogue.callers import apply as apply_callers
from crawler.catalogue.reproductions import apply as apply_reproductions


def add_meaning(records: list[dict[str, Any]], primaries: dict[str, dict[str, Any]], results: list[dict[str, Any]],
                tests: Sequence[dict[str, Any]], permalink: Callable[[str, int], str | None]) -> None:
    """Fill ``meaning.callers`` and ``meaning.reproductions`` of ``records`` (in place)."""
    graph = Graph(results)
    apply_callers(records, primaries, graph)
    apply_reproductions(records, list(tests), graph, permalink)
