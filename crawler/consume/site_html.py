"""The HTML every page of the static site is made of: escaping, the links of a validated record,
highlighted code and the page layout (its Content-Security-Policy, header and search box)."""

from __future__ import annotations

import html
import re
from typing import Any

from crawler.base.sink import visible
from crawler.consume.highlight import highlight_native, highlight_python
from crawler.model.records import URL_PATTERN


def esc(text: Any) -> str:
    """Text as HTML, controls and bidi overrides shown as escapes (``\\u202e``) as the terminal
    shows them: a browser would reorder the text around a bidi control, as it does in code."""
    return html.escape(visible(str(text), newlines=True), quote=True)


def safe_url(url: str) -> str:
    """A link of a validated record (https on the repository's host, ``records.URL_PATTERN``);
    anything else becomes a dead link rather than a live one."""
    return url if re.fullmatch(URL_PATTERN, url) else "#"


def code_html(code: str, start: int | None = None, hl: list[int] | None = None, native: bool = False) -> str:
    """Python source (or, ``native``, C++/CUDA/Rust) highlighted (highlight.py), numbered from
    ``start``, lines ``hl`` marked."""
    return (highlight_native if native else highlight_python)(code, start, set(hl or ()))


def static_file(name: str) -> str:
    """One of the site's own files (``crawler/consume/static``: search.js, index.js, site.css), as
    the package holds it: read as a resource, so an installed wheel serves the same bytes."""
    from importlib.resources import files

    return files("crawler.consume").joinpath("static", name).read_text(encoding="utf-8")


def layout(title: str, body: str, root: str, repo: str, scripts: tuple[str, ...] = ()) -> str:
    extra = "".join(f'<script src="{root}{name}"></script>\n' for name in scripts)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; base-uri 'none'; form-action 'none'">
<title>{esc(title)}</title>
<link rel="stylesheet" href="{root}style.css">
</head>
<body data-root="{root}">
<header class="site"><a class="home" href="{root}index.html">{esc(repo)} error catalogue</a>
<textarea id="search" rows="1" placeholder="Paste an error message, a traceback or a log, or search…" autocomplete="off" spellcheck="false" aria-label="Search the catalogue"></textarea>
</header>
<ul id="results" aria-live="polite" aria-label="Search results"></ul>
<main>
{body}
</main>
<script src="{root}search-index.js"></script>
<script src="{root}search.js"></script>
{extra}</body>
</html>
"""
