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
    return [template["text"], fields, bool(template.get("opaque")), site["exception_qualname"], site.get("condition")]


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
    """The site's derived facts: those attached to it while still valid, else computed now (and
    not attached: the site is left as it is)."""
    found = site.get(KEY)
    if found is None or found["stamp"] != _stamp(site):
        return derive(site)
    return found


def derive_result(result: FileResult) -> FileResult:
    """A per-file extraction result whose sites carry their derived facts (copies: the result
    given is left as it is)."""
    if not result.get("sites"):
        return result
    sites = []
    for site in result["sites"]:
        copy = site.copy()
        copy[KEY] = derive(site)
        sites.append(copy)
    done = result.copy()
    done["sites"] = sites
    return done
