"""Per-site facts that follow from a site's template alone, computed where the site is extracted.

Grouping needs each site's entry key, and the search index each entry's literal fragments,
anchor words and tokens: a pass over the template text per site. Computed in the extraction
workers and cached with the file's result, they leave the serial end of a crawl with lookups.
Each derivation is stamped with what it came from (template text and fields, opacity, exception); a site
whose template was rewritten later (the hierarchy's ``__init__`` substitution) is derived again.
"""

from __future__ import annotations

from typing import Any, Final

from crawler.extract.ids import entry_key
from crawler.extract.segments import (
    anchor_tokens,
    fragments,
    search_tokens,
    template_segments,
)
from crawler.model.shapes import ExtractedSite, FileResult

KEY: Final = "_derived"


def _stamp(site: ExtractedSite) -> list[Any]:
    template = site["template"]
    fields = [f["expr"] for f in template.get("fields", ())]
    return [template["text"], fields, bool(template.get("opaque")), site["exception_qualname"]]


def derive(site: ExtractedSite) -> dict[str, Any]:
    template = site["template"]
    segs = template_segments(template)
    opaque = bool(template.get("opaque"))
    return {
        "stamp": _stamp(site),
        "key": list(entry_key(site)),
        "fragments": fragments(segs),
        "starts_literal": bool(segs) and segs[0][0] == "lit",
        "ends_literal": bool(segs) and segs[-1][0] == "lit",
        "anchors": list(dict.fromkeys(anchor_tokens(segs))),
        "tokens": [] if opaque else search_tokens(template["text"]),
    }


def derived(site: ExtractedSite) -> dict[str, Any]:
    """The site's derived facts, computed now unless a still-valid derivation is attached."""
    found = site.get(KEY)
    if found is None or found["stamp"] != _stamp(site):
        found = site[KEY] = derive(site)
    return found


def derive_result(result: FileResult) -> FileResult:
    """Attach derived facts to every site of a per-file extraction result (in place)."""
    for site in result.get("sites", ()):
        derived(site)
    return result
