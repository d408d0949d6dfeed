"""A dataset as a static site (``errcat render``): one page per entry, an index, offline search.

Layout of the site directory::

    index.html            every entry, with the search box
    errors/<id>.html      one catalogue page per entry (page_model's sections, as errcat show has them)
    search-index.js       what the search box needs of the dataset's search index, as a script
                          (file:// pages cannot fetch JSON)
    search.js, style.css  the search box (plain JS, no network) and the styles, copied from the
                          package's crawler/consume/static (site.css with Pygments' styles after it)
    .errcat-site          marks the directory as a site errcat render made (see may_replace)

The site copies no dataset file: a page's JSON link and the index's dataset link go to the
dataset itself (``data_url``: the dataset's path relative to the site unless given), so the
records and search.json are stored once (on vLLM they were 68 of the site's 153 MB).

Everything that comes from the crawled source is escaped: text with ``html.escape``, code by
Pygments, and JSON inside ``<script>`` with ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX``.
``--format markdown`` writes ``index.md`` and ``errors/<id>.md`` instead.

The directory belongs to errcat render (``.errcat-site`` marks it): each render replaces it as a
whole, atomically, and refuses to replace a directory it did not make.
"""

from __future__ import annotations

import json
import os
import re
import stat
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Iterator, cast

from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

from crawler.base.errors import UsageError
from crawler.base.markdown import safe_link
from crawler.base.progress import task
from crawler.consume.history_page import Others, Piece
from crawler.consume.meaning_page import split_code
from crawler.consume.page_model import NOT_EXPLAINED as NOT_EXPLAINED
from crawler.consume.page_model import Block, Bullets, Code, Context, Evidence, Items, Links, Markdown, Rows, Section, build, file_digests, status_word
from crawler.consume.page_model import Line as LineBlock
from crawler.consume.page_model import no_permalink as no_permalink
from crawler.consume.site_html import code_html, esc, layout, safe_url, static_file
from crawler.consume.site_index import MAX_CHANGELOG_CHARS, index_html
from crawler.consume.site_markdown import (
    code_language,
    highlight_block,
    markdown_html,
    markdown_inline,
    markdown_markdown,
    md_code,
    md_inline,
    md_text,
)
from crawler.consume.site_markdown import (
    md_indent as _indent,
)
from crawler.model.kinds import RESPONSE, exception_word
from crawler.model.records import ID_RE
from crawler.model.search import SearchIndex


def script_json(data: Any) -> str:
    """JSON safe inside <script>: no '</script>', no HTML entities, no JS line terminators."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, rep in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, rep)
    return text


def data_url(dataset: Path, out: Path, given: str | None = None) -> str:
    """Where the site's readers reach the dataset: ``given`` (https, or a path relative to the
    site's root), else the dataset's path relative to ``out``, percent-encoded, so the links
    work from disk and on a host that serves both directories as they lie."""
    if given is not None:
        url = given.strip().rstrip("/")
        if not url or not safe_link(url) or re.search(r"[\s\x00-\x1f\x7f\"'<>\\]", url):
            raise UsageError(f"--data-url {given!r}: give an https:// URL or a relative path (where the dataset is served)")
        return url
    return urllib.parse.quote(Path(os.path.relpath(dataset, out)).as_posix())


def record_href(base: str, eid: str, up: str = "../") -> str:
    """The link from a page in ``errors/`` to the dataset's record of ``eid``."""
    return f"{base if base.lower().startswith('https://') else up + base}/errors/{eid}.json"


_FORMATTER_CSS = HtmlFormatter(style="default").get_style_defs(".highlight")


# --------------------------------------------------------------------------- HTML


def _section(key: str, title: str, inner: str) -> str:
    return f'<section id="{key}">\n<h2>{esc(title)}</h2>\n{inner}\n</section>\n'


def _bullets(items: list[str]) -> str:
    # an item of one line is inline Markdown; one of several lines may hold paragraphs and fences
    return "<ul>" + "".join(f"<li>{markdown_html(i) if chr(10) in i.strip() else markdown_inline(i)}</li>" for i in items) + "</ul>"


def primary(r: dict[str, Any]) -> dict[str, Any]:
    """The record's primary site, where its snippet and facts are read (schema 3 drops the
    record's top-level copies of them)."""
    return r["sites"][0]


def _entry_link(eid: str, titles: dict[str, str]) -> str:
    """Another entry by its title, linked when the site has its page."""
    if eid in titles and ID_RE.fullmatch(eid):
        return f'<a href="{esc(eid)}.html">{esc(titles[eid])}</a> <code>{esc(eid)}</code>'
    return f"<code>{esc(eid)}</code>"


def _item_href(link: tuple[str, str] | None, titles: dict[str, str], suffix: str) -> str | None:
    """Where a list item's first piece links: another entry's page when the site has it, a permalink."""
    if link is None:
        return None
    if link[0] == "entry":
        return f"{link[1]}{suffix}" if link[1] in titles and ID_RE.fullmatch(link[1]) else None
    return safe_url(link[1])


def _linked_items(block: Items, titles: dict[str, str], suffix: str, pieces: Callable[[list[Piece], dict[str, str]], str]) -> list[tuple[str | None, str, str]]:
    """Each item of a list as (where its first piece links, that piece, the rest), rendered by ``pieces``."""
    if not block.links:  # (most lists link nothing: one call per item)
        return [(None, "", pieces(item, titles)) for item in block.items]
    return [(_item_href(block.links[n], titles, suffix), pieces(item[:1], titles), pieces(item[1:], titles)) for n, item in enumerate(block.items)]


def _code_html(text: str) -> str:
    return f"<code>{esc(text)}</code>"


#: How each kind of page_model piece reads in HTML, every text escaped ("status" is the row's class).
_HTML_PIECES: dict[str, Callable[[str, dict[str, str]], str]] = {
    "text": lambda t, _: esc(t),
    "code": lambda t, _: _code_html(t),
    "exception": lambda t, _: _code_html(t),
    "id": lambda t, _: _code_html(t),
    "entry": lambda t, titles: _entry_link(t, titles),
    "arrow": lambda t, _: " &rarr; ",
    "prose": lambda t, _: split_code(t, esc, _code_html),
    "muted": lambda t, _: f'<span class="muted">{esc(t)}</span>',
    "link": lambda t, _: f'<a class="permalink" href="{esc(safe_url(t))}">view on GitHub</a>',
    "status": lambda t, _: "",
}


def _piece_html(kind: str, text: str, titles: dict[str, str]) -> str:
    return _HTML_PIECES.get(kind, _HTML_PIECES["text"])(text, titles)


def _pieces_html_of(pieces: list[Piece], titles: dict[str, str]) -> str:
    """page_model's pieces as HTML, every text escaped."""
    return "".join([_piece_html(k, t, titles) for k, t in pieces])


#: The class of a row's value, by the rows' style and label.
_DD_CLASS = {("todo", "Whose move"): "who", ("todo", "Step"): "step"}
_DD_ID = {"Exception": "exception"}


def _block_html(block: Block, section: Section, titles: dict[str, str], json_href: str = "") -> str:
    if isinstance(block, Rows):
        cells = []
        for label, pieces in block.rows:
            status = next((t for k, t in pieces if k == "status"), None)
            attrs = (f' id="{_DD_ID[label]}"' if block.style == "summary" and label in _DD_ID else "") + (
                f' class="status-{esc(status)}"' if status else f' class="{_DD_CLASS[block.style, label]}"' if (block.style, label) in _DD_CLASS else ""
            )
            cells.append(f"<dt>{esc(label)}</dt><dd{attrs}>{_pieces_html_of(pieces, titles)}</dd>")
        summary = ' id="summary"' if block.style == "summary" else ""
        return f'<dl class="facts"{summary}>' + "".join(cells) + "</dl>"
    if isinstance(block, LineBlock):
        cls = {
            "inherited": ' class="inherited" id="inherited"',
            "muted": ' class="muted"',
            "derived": ' class="muted"',
            "retired": ' class="retired"',
            "caught": ' class="caught"',
        }.get(block.style, "")
        if section.key == "not-explained":
            cls = ' class="muted" id="not-explained"'
        if section.key == "provenance":
            return f'<p>{_pieces_html_of(block.pieces, titles)} <a id="json-link" href="{esc(json_href)}">This entry as JSON</a>.</p>'
        return f"<p{cls}>{_pieces_html_of(block.pieces, titles)}</p>"
    if isinstance(block, Links):
        return (
            '<p class="tracker">'
            + " · ".join(f'<a href="{esc(safe_url(url))}" rel="nofollow noopener">{esc(label)}</a>' for label, url in block.links)
            + "</p>"
        )
    if isinstance(block, Markdown):
        return markdown_html(block.text)
    if isinstance(block, Bullets):
        return _bullets(block.items)
    if isinstance(block, Items):
        tag = "ol" if block.ordered else "ul"
        out = [
            f"<li>{f'<a href={chr(34)}{esc(href)}{chr(34)}>{first}</a>' if href else first}{rest}</li>"
            for href, first, rest in _linked_items(block, titles, ".html", _pieces_html_of)
        ]
        return f"<{tag}>" + "".join(out) + f"</{tag}>"
    if isinstance(block, Code):
        head = f"<h3>{esc(block.label)}</h3>" if block.label else ""
        if block.language == "message":
            return f'<pre class="message">{esc(block.code) or "<span class=muted>(no message)</span>"}</pre>'
        if block.language == "":
            # an example fix's two blocks in the one language both read as
            lang = code_language("\n".join(b.code for b in section.blocks if isinstance(b, Code))) if section.key == "example-fix" else ""
            return head + highlight_block(block.code, lang)
        hit = list(range(block.hit[0], block.hit[1] + 1)) if block.hit else None
        return head + code_html(block.code, block.start, hit, native=block.language in _FENCE)
    if isinstance(block, Evidence):
        return ""  # in the summary's list (``_reported_html``)
    raise TypeError(f"no HTML for {type(block).__name__}")


def _reported_html(block: Evidence) -> str:
    """ "Reported in #2248, #10439": the issues where users met the error (curated evidence; each
    link was checked to be the repository's own on reading), the reporter's quote as its tooltip."""
    links = ", ".join(f'<a href="{esc(safe_url(url))}" title="{esc(title or quote or "")}">{esc(number)}</a>' for url, title, quote, number in block.items)
    return f'<dt>Reported in</dt><dd id="reported">{links}</dd>'


def entry_html(
    r: dict[str, Any], repo: str, titles: dict[str, str], data: str = ".", others: Others | None = None, digests: frozenset[str] = frozenset()
) -> str:
    model = build(r, Context(others, digests))
    json_href = record_href(data, r["id"])
    parts: list[str] = [f'<h1 id="title">{esc(model.title)}</h1>']
    for section in model.sections:
        inner = "".join([_block_html(b, section, titles, json_href) for b in section.blocks])
        if section.key == "summary":
            reported = "".join(_reported_html(b) for b in section.blocks if isinstance(b, Evidence))
            parts.append(inner.replace("</dl>", reported + "</dl>", 1) if reported else inner)
        elif section.title is None:
            parts.append(inner)
        else:
            parts.append(_section(section.key, section.title, inner))
    what = exception_word(r) if r["kind"] != RESPONSE else "error response"  # not its error type alone
    return layout(f"{r['title']} — {what}", "\n".join(p for p in parts if p), "../", repo)


# --------------------------------------------------------------------------- Markdown


#: A native snippet's fence language (``NativeInfo.language``), for GitHub's highlighting.
_FENCE = {"cpp": "cpp", "cuda": "cuda", "rust": "rust"}


def _pieces_md(pieces: list[Piece], titles: dict[str, str]) -> str:
    """page_model's pieces as Markdown: the dataset's strings escaped (md_text, md_inline)."""
    return "".join([_MD_PIECES.get(k, _MD_PIECES["text"])(t, titles) for k, t in pieces])


def _md_entry(eid: str, titles: dict[str, str]) -> str:
    """Another entry, linked as the HTML page links it when the site has its page."""
    return f"[{md_text(titles[eid])}]({eid}.md) {md_inline(eid)}" if eid in titles and ID_RE.fullmatch(eid) else md_inline(eid)


_MD_PIECES: dict[str, Callable[[str, dict[str, str]], str]] = {
    "text": lambda t, _: md_text(t),
    "code": lambda t, _: md_inline(t),
    "exception": lambda t, _: md_inline(t),
    "id": lambda t, _: md_inline(t),
    "entry": _md_entry,
    "arrow": lambda t, _: " → ",
    "prose": lambda t, _: split_code(t, md_text, md_inline),
    "link": lambda t, _: f"[view on GitHub](<{safe_url(t)}>)",
    "status": lambda t, _: "",
}


def _block_md(block: Block, section: Section, titles: dict[str, str], json_href: str) -> str:
    def bullets(items: list[str]) -> str:
        return "\n".join(_indent(markdown_markdown(s), "- ", "  ") for s in items)

    if isinstance(block, Rows):
        return "\n".join(f"- **{md_text(label)}:** {_pieces_md(status_word(pieces), titles)}" for label, pieces in block.rows)
    if isinstance(block, LineBlock):
        text = _pieces_md(block.pieces, titles)
        if section.key == "provenance":
            return f"{text} [This entry as JSON](<{json_href}>)"
        if section.key == "not-explained":
            return f"*{NOT_EXPLAINED}*"
        return f"*{text}*" if block.style in ("inherited", "muted", "derived") else text
    # curated text is Markdown: passed through as such, where the dataset's other strings are escaped
    simple = {
        Links: lambda b: " · ".join(f"[{label}](<{safe_url(url)}>)" for label, url in b.links),
        Markdown: lambda b: markdown_markdown(b.text),
        Bullets: lambda b: bullets(b.items),
    }
    if type(block) in simple:
        return str(simple[type(block)](block))
    if isinstance(block, Items):
        mark = "1." if block.ordered else "-"
        lines = [f"{mark} {f'[{first}](<{href}>)' if href else first}{rest}" for href, first, rest in _linked_items(block, titles, ".md", _pieces_md)]
        return "\n".join(lines)
    if isinstance(block, Code):
        head = f"{block.label}:\n\n" if block.label else ""
        if block.language == "message":
            return md_code(block.code)
        if block.language == "":
            lang = code_language("\n".join(b.code for b in section.blocks if isinstance(b, Code)) if section.key == "example-fix" else block.code)
            return head + md_code(block.code, lang)
        return head + md_code(block.code, _FENCE.get(block.language, "python"))
    if isinstance(block, Evidence):
        return "- **Reported in:** " + ", ".join(f"[{number}](<{safe_url(url)}>)" for url, _, _, number in block.items)
    raise TypeError(f"no Markdown for {type(block).__name__}")


def entry_markdown(r: dict[str, Any], titles: dict[str, str], data: str = ".", others: Others | None = None, digests: frozenset[str] = frozenset()) -> str:
    model = build(r, Context(others, digests))
    out = [f"# {md_text(model.title)}", ""]
    for section in model.sections:
        body = "\n\n".join(_block_md(b, section, titles, record_href(data, r["id"])) for b in section.blocks)
        if section.key == "summary":
            body = body.replace("\n\n- **Reported in:**", "\n- **Reported in:**")  # one list with the summary's rows
        if section.title is None:
            out += [body, ""]
        else:
            out += [f"## {md_text(section.title)}", "", body, ""]
    return "\n".join(out)


def index_markdown(records: list[dict[str, Any]], manifest: dict[str, Any], repo: str) -> str:
    lines = [f"# {md_text(repo)}: {len(records)} errors", "", "| Error | Exception | Where |", "| --- | --- | --- |"]
    for r in records:
        title = md_text(r["title"]).replace("|", "\\|")
        lines.append(
            f"| [{title}](errors/{r['id']}.md) | {md_inline(exception_word(r))} | {md_inline(r['location']['path'] + ':' + str(r['location']['line']))} |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- writing


def render_site(
    dataset: Path, out: Path, fmt: str = "html", progress: Callable[[str], None] = lambda _: None, changelog: Path | None = None, data: str | None = None
) -> int:
    """Make ``out`` the site of one dataset; returns the number of entry pages.

    The site is written the way a dataset is (:func:`writer.write_tree`): into a hidden sibling,
    then swapped in whole, so ``out`` is always the previous site or the complete new one, and
    holds nothing else (no page of an entry that is gone, nothing planted in it). What is
    replaced must be a site errcat render made, an empty directory, or nothing: see
    :func:`may_replace`. ``changelog`` (the Markdown ``errcat sync --changelog`` wrote) is shown
    on the index. ``data`` is where the site's readers reach the dataset (see :func:`data_url`).
    """
    from crawler.base.dataset_files import MANIFEST
    from crawler.publish.dataset import read_consumed
    from crawler.publish.writer import write_tree

    if not (dataset / MANIFEST).is_file():
        raise UsageError(f"not a dataset (no manifest.json): {dataset}")
    changes = read_changelog(changelog) if changelog is not None else None
    # Validated before use, as `adopt` validates an artifact: ids become file names below,
    # permalinks become links, and each page links to its record's file "as JSON".
    read = read_consumed(dataset, plain=True)  # (the pages read plain data: no model of each record)
    valid = read.manifest
    manifest = valid.model_dump(mode="json")
    repo = f"{valid.repo.owner}/{valid.repo.name}"
    records: list[dict[str, Any]] = sorted(cast("list[dict[str, Any]]", read.data or []), key=lambda r: r["id"])
    titles = {r["id"]: r["title"] for r in records}
    by_id = {r["id"]: r for r in records}  # a replacement's page says how the other record differs
    digests = file_digests(manifest)  # a wheel's files digest, shown as its release, never as a commit
    index = read.search
    foreign = read.foreign
    out = Path(os.path.abspath(out))  # "." and "x/.." name the directory itself, which the swap renames
    real_out, real_data = out.resolve(), dataset.resolve()
    if real_out == real_data or real_data in real_out.parents:
        raise UsageError("write the site outside the dataset directory (the crawl replaces that directory)")
    if real_out in real_data.parents:
        raise UsageError(f"--out {out} holds the dataset; the site replaces its directory as a whole")
    base = data_url(real_data, real_out, data)

    def files() -> Iterator[tuple[str, bytes]]:  # runs once out is known to be replaceable
        with task(progress, f"rendering pages into {out}", len(records), "pages") as pages:
            yield SITE_MARK, SITE_MARK_TEXT
            if fmt == "markdown":
                for r in records:
                    yield f"errors/{r['id']}.md", entry_markdown(r, titles, base, by_id, digests).encode()
                    pages.advance()
                yield "index.md", index_markdown(records, manifest, repo).encode()
            else:
                assert index is not None
                for r in records:
                    yield f"errors/{r['id']}.html", entry_html(r, repo, titles, base, by_id, digests).encode()
                    pages.advance()
                yield "index.html", index_html(records, manifest, repo, changes).encode()
                yield "style.css", (static_file("site.css") + _FORMATTER_CSS + "\n").encode()
                yield "search.js", static_file("search.js").encode()
                yield "index.js", static_file("index.js").encode()
                yield "search-index.js", f"window.ERRCAT_SEARCH = {script_json(_search_payload(index, foreign, by_id))};\n".encode()

    write_tree(out, files(), what="site", may_replace=may_replace)
    return len(records)


def read_changelog(path: Path) -> str:
    """A sync's changelog: UTF-8 text of at most MAX_CHANGELOG_CHARS characters (rendered as
    curated Markdown is: no raw HTML, https and relative links only)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read the changelog {path}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"the changelog {path} is not UTF-8 text") from None
    if len(text) > MAX_CHANGELOG_CHARS:
        raise UsageError(f"the changelog {path} is longer than {MAX_CHANGELOG_CHARS:,} characters")
    return text


#: Written into every site: what lets the next render replace the directory as a whole.
SITE_MARK = ".errcat-site"
SITE_MARK_TEXT = b"Written by errcat render, which replaces this directory as a whole: keep nothing else here.\n"


def may_replace(out: Path) -> None:
    """Refuse to replace ``out`` unless it is absent, an empty directory, or a site errcat render
    made (it holds a regular file named :data:`SITE_MARK`). Anything else (``--out ~``, a project
    directory, a symlink to one) would be deleted by the swap, so it is never taken for a site."""
    try:
        st = os.lstat(out)
    except (FileNotFoundError, NotADirectoryError):
        return  # nothing there: the write makes it, or says in one line why it cannot
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"refusing to replace {out}: it is a symlink; pass the directory it points to")
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"refusing to replace {out}: not a directory")
    try:
        mark = os.lstat(out / SITE_MARK)
        if stat.S_ISREG(mark.st_mode):
            return
    except FileNotFoundError:
        pass
    with os.scandir(out) as entries:
        if next(entries, None) is not None:
            raise UsageError(f"refusing to replace {out}: not empty and not a site errcat render made (no {SITE_MARK} in it); pass a new or empty directory")


def _search_payload(index: SearchIndex, foreign: Sequence[Any] = (), records: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """What the search box needs of the index (sites stay in search.json), the validated foreign
    errors (foreign_match.py) it answers "not raised by" with, and over a history the releases that
    raised each entry and what raises a retired one's error today (``release_fields``)."""
    from crawler.consume.site_search import caught_as, own_ancestors, ranking_fields

    catch = caught_as(index)
    releases, lineage = release_fields(records or {})
    # pairs, not an object: a name from the crawled code ("__proto__", "constructor") is no key to trust in JS
    return {
        "repo": index.repo,
        "commit": index.commit,
        "catch": list(catch.items()),
        "entries": [
            {
                "id": e.id,
                "title": e.title,
                "exception": e.exception,
                "text": e.text,
                "fragments": e.fragments,
                "starts_literal": e.starts_literal,
                "ends_literal": e.ends_literal,
                "anchors": e.anchors,
                "tokens": e.tokens,
                **ranking_fields(e),
                **own_ancestors(e, catch),
                **lineage.get(e.id, {}),
                # only where there are some: few entries are assembled messages
                **({"alternatives": [{"fragments": a.fragments, "anchors": a.anchors} for a in e.alternatives]} if e.alternatives else {}),
            }
            for e in index.entries
        ],
        "foreign": [{"name": f.name, "origin": f.origin, "match": f.match, "explanation": f.explanation, "check": list(f.check)} for f in foreign],
        **({"releases": releases} if releases else {}),
    }


def release_fields(records: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The releases the catalogue's histories name (``lineage.covered_releases``), and for each
    entry whose history names some, ``v``: [first, last, removed in] as positions in that list
    (-1: none) with ``r`` 1 when it is retired, and ``t``: the entry that raises a retired one's
    error today (``lineage.chain``'s last, when live), so the box answers as ``errcat match``'s
    lineage and ``--version`` do."""
    from crawler.consume.lineage import chain, covered_releases, version_key
    from crawler.consume.lineage import releases as span_of

    covered = covered_releases([r.get("history") for r in records.values()])
    by_key = {version_key(v): n for n, v in enumerate(covered)}

    def at(version: str | None) -> int:
        return by_key.get(version_key(version), -1) if version else -1

    out: dict[str, dict[str, Any]] = {}
    for eid, r in records.items():
        history = r.get("history")
        span = span_of(history)
        retired = isinstance(history, dict) and history.get("retired") is True
        fields: dict[str, Any] = {"v": [at(span.first), at(span.last), at(span.removed_in)]} if span is not None else {}
        if retired:
            fields["r"] = 1
            after = chain(r, records.get)
            if after and not (after[-1].get("history") or {}).get("retired"):
                fields["t"] = str(after[-1]["id"])
        if fields:
            out[eid] = fields
    return covered, out
