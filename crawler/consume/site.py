"""A dataset as a static site (``errcat render``): one page per entry, an index, offline search.

Layout of the site directory::

    index.html            every entry, with the search box
    errors/<id>.html      one catalogue page per entry (sections in the order of page.py)
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
from typing import Any, Callable, Iterator

from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

from crawler.base.errors import UsageError
from crawler.base.markdown import safe_link
from crawler.base.progress import task
from crawler.catalogue.evidence import issue_number
from crawler.consume.history_page import TITLE as HISTORY
from crawler.consume.history_page import Others, Piece, history_note, history_rows, inherited, inherited_note
from crawler.consume.kinds import SINCE, article, explained_note, kind_text, shows_exception, surface_rows, trigger_label, unknown_exception
from crawler.consume.meaning_page import (
    DO_NOTE,
    DO_TITLE,
    FACTS_TITLE,
    NOTE,
    TITLE,
    action_rows,
    fact_lines,
    meaning_html,
    meaning_markdown,
    message_text,
    split_code,
    swallowed,
    tracker_links,
)
from crawler.consume.meaning_page import rows as meaning_rows
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
from crawler.model.records import ID_RE, shown_source
from crawler.model.search import SearchIndex

NOT_EXPLAINED = "Not yet explained."


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


def no_permalink(record: dict[str, Any]) -> str:
    """Why a record's permalinks are null, as its provenance says."""
    return (record["provenance"].get("permalinks") or {}).get("reason") or "none recorded"


_FORMATTER_CSS = HtmlFormatter(style="default").get_style_defs(".highlight")


def _shown_lines(loc: dict[str, Any], snippet: dict[str, Any]) -> list[int]:
    """The raise's lines that the snippet shows (a record's line numbers are not trusted to be
    few: the range is cut to the snippet's own lines)."""
    first = max(loc["line"], snippet["start_line"])
    last = min(loc.get("end_line", loc["line"]), snippet["start_line"] + snippet["code"].count("\n"))
    return list(range(first, last + 1))


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


#: "curated" text a reviewer accepted as a machine wrote it: read by a person, not written by one
ACCEPTED_TEXT = "yes, reviewed by a person"
STATUS_TEXT = {"curated": "yes, by a person", "draft": "draft: machine-written, not reviewed", "absent": "not yet by a person"}


def _history_html(r: dict[str, Any], titles: dict[str, str], others: Others | None = None) -> str:
    """The history section (absent before a history or sync run covered the entry)."""
    rows = history_rows(r.get("history"), r, others)
    if not rows:
        return ""
    note = history_note(r.get("history"))
    return _section("history", HISTORY, (f'<p class="retired">{esc(note)}</p>' if note else "") + '<dl class="facts">' + "".join(
        f"<dt>{esc(label)}</dt><dd>{_pieces_html(pieces, titles)}</dd>" for label, pieces in rows) + "</dl>")


def _pieces_html(pieces: list[Piece], titles: dict[str, str]) -> str:
    """A history row's pieces (``history_page.Piece``) as HTML, every text escaped."""
    def piece(kind: str, text: str) -> str:
        if kind == "entry":
            return _entry_link(text, titles)
        if kind == "code":
            return f"<code>{esc(text)}</code>"
        return " &rarr; " if kind == "arrow" else esc(text)

    return "".join(piece(k, t) for k, t in pieces)


def _history_markdown(r: dict[str, Any], titles: dict[str, str], others: Others | None = None) -> list[str]:
    rows = history_rows(r.get("history"), r, others)
    if not rows:
        return []
    note = history_note(r.get("history"))
    lines = [f"## {HISTORY}", ""] + ([md_text(note), ""] if note else [])
    for label, pieces in rows:
        text = _pieces_markdown(pieces, titles)
        lines.append(f"- **{md_text(label)}:** {text}")
    return lines + [""]


def _entry_link(eid: str, titles: dict[str, str]) -> str:
    """Another entry by its title, linked when the site has its page."""
    if eid in titles and ID_RE.fullmatch(eid):
        return f'<a href="{esc(eid)}.html">{esc(titles[eid])}</a> <code>{esc(eid)}</code>'
    return f"<code>{esc(eid)}</code>"


def _pieces_markdown(pieces: list[Piece], titles: dict[str, str]) -> str:
    def piece(kind: str, text: str) -> str:
        if kind == "entry":  # linked as the HTML page links it, when the site has its page
            return f"[{md_text(titles[text])}]({text}.md) {md_inline(text)}" if text in titles and ID_RE.fullmatch(text) else md_inline(text)
        return md_inline(text) if kind == "code" else " → " if kind == "arrow" else md_text(text)

    return "".join(piece(k, t) for k, t in pieces)


def _curated_html(ex: dict[str, Any]) -> list[str]:
    """The curated sections that have something in them, Markdown rendered (site_markdown)."""
    parts = []
    if ex.get("what_it_means"):
        parts.append(_section("what-it-means", "What it means", markdown_html(ex["what_it_means"])))
    if ex.get("solutions"):
        parts.append(_section("solutions", "Solutions", _bullets(ex["solutions"])))
    fix = ex.get("example_fix") or {}
    if fix.get("before") or fix.get("after"):
        lang = code_language(fix.get("before", "") + "\n" + fix.get("after", ""))
        parts.append(_section("example-fix", "Example fix", "<h3>Before</h3>" + highlight_block(fix.get("before", ""), lang)
                              + "<h3>After</h3>" + highlight_block(fix.get("after", ""), lang)))
    patterns = ex.get("defensive_patterns") or []
    if patterns:
        parts.append(_section("defensive-patterns", "Defensive patterns", "".join(
            markdown_html(p["strategy"]) + (highlight_block(p["code"], "") if p.get("code") else "") for p in patterns)))
    if ex.get("prevention"):
        parts.append(_section("prevention", "Prevention", _bullets(ex["prevention"])))
    when = ex.get("when_it_happens") or {}
    when_html = (markdown_html(when["trigger"]) if when.get("trigger") else "") + (_bullets(when["common_situations"]) if when.get("common_situations") else "")
    if when_html:
        parts.append(_section("when-it-happens", "When it happens", when_html))
    return parts


def _drafted_by(ex: dict[str, Any]) -> str:
    return f" (machine-written by <code>{esc(ex['model'])}</code>, not reviewed)" if ex.get("model") else esc(explained_note(ex))


def _reported_html(ex: dict[str, Any]) -> str:
    """"Reported in #2248, #10439": the issues where users met the error (curated evidence; each
    link was checked to be the repository's own on reading), the reporter's quote as its tooltip."""
    evidence = ex.get("evidence") or []
    if not evidence:
        return ""
    links = ", ".join(
        f'<a href="{esc(safe_url(e["url"]))}" title="{esc(e.get("title") or e.get("quote") or "")}">{esc(issue_number(e["url"]))}</a>'
        for e in evidence)
    return f'<dt>Reported in</dt><dd id="reported">{links}</dd>'


def _what_to_do_html(r: dict[str, Any]) -> str:
    """Who acts and the steps (``meaning.action``, derived), with the tracker's links."""
    rows = action_rows(r.get("meaning"))
    if not rows:
        return ""
    links = tracker_links(r)
    return _section("what-to-do", DO_TITLE, '<dl class="facts">' + "".join(
        f'<dt>{esc(label)}</dt><dd class="{"who" if label == "Whose move" else "step"}">{split_code(text, esc, lambda c: f"<code>{esc(c)}</code>")}</dd>'
        for label, text in rows) + "</dl>"
        + ('<p class="tracker">' + " · ".join(f'<a href="{esc(safe_url(url))}" rel="nofollow noopener">{esc(label)}</a>'
                                               for label, url in links) + "</p>" if links else "")
        + f'<p class="muted">{esc(DO_NOTE)}</p>')


def entry_html(r: dict[str, Any], repo: str, titles: dict[str, str], data: str = ".", others: Others | None = None) -> str:
    exc = r["exception"]
    loc = r["location"]
    ex = r.get("explanation") or {}
    prov = r["provenance"]
    site = primary(r)
    status = r.get("explanation_status", "absent")
    parts: list[str] = [f'<h1 id="title">{esc(r["title"])}</h1>']
    ancestor = exc.get("builtin_ancestor")
    ancestry = f" ({article(ancestor)} <code>{esc(ancestor)}</code>)" if ancestor and ancestor != exc["name"] else ""
    parts.append(
        '<dl class="facts" id="summary">'
        + (f'<dt>Exception</dt><dd id="exception">{esc(unknown_exception(r) or "")}</dd>' if shows_exception(r) and unknown_exception(r)
           else f'<dt>Exception</dt><dd id="exception"><code>{esc(exc["qualname"])}</code>{ancestry}</dd>'
           if shows_exception(r) else "")
        + f'<dt>Kind</dt><dd>{esc(kind_text(r["kind"], r.get("native")))}</dd>'
        + "".join(f"<dt>{esc(label)}</dt><dd><code>{esc(text)}</code></dd>" for label, text in surface_rows(r))
        + f'<dt>Id</dt><dd><code>{esc(r["id"])}</code></dd>'
        f'<dt>Explained</dt><dd class="status-{esc(status)}">{esc(ACCEPTED_TEXT if status == "curated" and ex.get("accepted_as_is") else STATUS_TEXT.get(status, status))}{_drafted_by(ex)}</dd>'
        + _reported_html(ex)
        + "</dl>"
    )
    msg = r["message"]
    parts.append(_section("message", "Message", f'<pre class="message">{esc(message_text(msg)) or "<span class=muted>(no message)</span>"}</pre>'))
    parts.append(_what_to_do_html(r))
    parts.append(_history_html(r, titles, others))
    # a retired entry's page shows the explanation written for its successor, said as such
    got = inherited(r, others)
    curated = _curated_html(dict(got[0]["explanation"]) if got else ex)
    if got:
        parts.append(f'<p class="inherited" id="inherited">{_pieces_html(inherited_note(got), titles)}</p>')
    parts += curated[:1]  # what it means, before the code
    snippet = site["snippet"]
    source = (
        f'<p><code>{esc(loc["path"])}:{loc["line"]}</code> in <code>{esc(loc["qualname"])}</code> — '
        + (f'<a class="permalink" href="{esc(safe_url(loc["permalink"]))}">view on GitHub</a></p>' if loc["permalink"]
           else f'<span class="muted no-permalink">no permalink: {esc(no_permalink(r))}</span></p>')
        + code_html(snippet["code"], snippet["start_line"], _shown_lines(loc, snippet), native=bool(site.get("native")))
    )
    parts.append(_section("source", "Source", source))
    facts = fact_lines(site.get("facts"))
    caught = swallowed(r)
    if facts or caught:
        parts.append(_section("facts", FACTS_TITLE, ("<ul>" + "".join(f"<li><code>{esc(x)}</code></li>" for x in facts) + "</ul>" if facts else "")
                              + (f'<p class="caught">{split_code(caught, esc, lambda c: f"<code>{esc(c)}</code>")}</p>' if caught else "")))
    derived = meaning_rows(r.get("meaning"), trigger_label(r))
    if derived:
        parts.append(_section("derived", TITLE, '<dl class="facts">' + "".join(
            f"<dt>{esc(label)}</dt><dd>{split_code(text, esc, lambda c: f'<code>{esc(c)}</code>')}</dd>"
            for label, text in derived) + f'</dl><p class="muted">{esc(NOTE)}</p>'))
    if curated[1:]:
        parts += curated[1:]
    elif not curated:
        parts.append(f'<p class="muted" id="not-explained">{NOT_EXPLAINED}</p>')
    derived_html = meaning_html(r)
    if derived_html:
        parts.append(derived_html)
    related = [x for x in r.get("related") or []]
    if related:
        parts.append(_section("related", "Related errors", "<ul>" + "".join(
            f'<li><a href="{esc(x["id"])}.html">{esc(x["title"])}</a> <span class="muted">({esc(x["reason"])})</span></li>'
            if x["id"] in titles else f'<li>{esc(x["title"])} <span class="muted">({esc(x["reason"])})</span></li>'
            for x in related) + "</ul>"))
    if len(r["sites"]) > 1:
        parts.append(_section("sites", f"All {len(r['sites'])} sites", "<ul>" + "".join(
            "<li>" + (f'<a href="{esc(safe_url(s["permalink"]))}"><code>{esc(s["path"])}:{s["line"]}</code></a>' if s["permalink"]
                      else f'<code>{esc(s["path"])}:{s["line"]}</code>') + f' in <code>{esc(s["qualname"])}</code></li>'
            for s in r["sites"]) + "</ul>"))
    commit, dated = shown_source(prov)
    parts.append(_section("provenance", "Last changed",
                          f'<p>{esc(prov["repo"])} at <code>{esc(commit)}</code> ({SINCE}){esc(dated)}. <a id="json-link" href="{esc(record_href(data, r["id"]))}">This entry as JSON</a>.</p>'))
    what = exc["name"] if r["kind"] != "response" else "error response"  # not its builder's name
    return layout(f"{r['title']} — {what}", "\n".join(p for p in parts if p), "../", repo)


# --------------------------------------------------------------------------- Markdown


#: A native snippet's fence language (``NativeInfo.language``), for GitHub's highlighting.
_FENCE = {"cpp": "cpp", "cuda": "cuda", "rust": "rust"}


def entry_markdown(r: dict[str, Any], titles: dict[str, str], data: str = ".", others: Others | None = None) -> str:
    exc, loc, ex, prov = r["exception"], r["location"], r.get("explanation") or {}, r["provenance"]
    out = [f"# {md_text(r['title'])}", "",
           *([f"- **Exception:** {unknown_exception(r) or md_inline(exc['qualname'])}"]
             if shows_exception(r) else []),
           f"- **Kind:** {md_text(kind_text(r['kind'], r.get('native')))}",
           *(f"- **{label}:** {md_inline(text)}" for label, text in surface_rows(r)), f"- **Id:** {md_inline(r['id'])}",
           f"- **Explained:** {r.get('explanation_status', 'absent')}"
           + (f" (machine-written by {md_inline(ex['model'])}, not reviewed)" if ex.get("model") else md_text(explained_note(ex))),
           *(["- **Reported in:** " + ", ".join(f"[{issue_number(e['url'])}](<{safe_url(e['url'])}>)" for e in ex["evidence"])]
             if ex.get("evidence") else []),
           "", "## Message", "", md_code(message_text(r["message"])), ""]
    todo = action_rows(r.get("meaning"))
    if todo:
        out += [f"## {DO_TITLE}", "", *(f"- **{label}:** {split_code(text, md_text, md_inline)}" for label, text in todo),
                *([" · ".join(f"[{label}](<{safe_url(url)}>)" for label, url in tracker_links(r))] if tracker_links(r) else []),
                "", f"*{md_text(DO_NOTE)}*", ""]
    out += _history_markdown(r, titles, others)
    got = inherited(r, others)
    if got:  # the explanation written for its successor, said as such
        ex = dict(got[0]["explanation"])
        out += [f"*{_pieces_markdown(inherited_note(got), titles)}*", ""]

    def sec(title: str, body: str) -> None:
        if body:  # as on the HTML page, a section with nothing in it is left out
            out.extend([f"## {title}", "", body, ""])

    def bullets(items: list[str]) -> str:
        return "\n".join(_indent(markdown_markdown(s), "- ", "  ") for s in items)

    # curated text is Markdown: passed through as such (markdown_markdown), where the dataset's
    # other strings are escaped (md_text, md_inline, md_code)
    sec("What it means", markdown_markdown(ex.get("what_it_means") or ""))
    snippet = primary(r)["snippet"]
    link = f"[view on GitHub](<{safe_url(loc['permalink'])}>)" if loc["permalink"] else f"no permalink: {md_text(no_permalink(r))}"
    out += ["## Source", "", f"{md_inline(loc['path'] + ':' + str(loc['line']))} in {md_inline(loc['qualname'])} — {link}",
            "", md_code(snippet["code"], _FENCE.get(str((primary(r).get("native") or {}).get("language")), "python")), ""]
    caught = swallowed(r)
    sec(FACTS_TITLE, "\n".join([*(f"- {md_inline(x)}" for x in fact_lines(primary(r).get("facts"))),
                                 *(["", split_code(caught, md_text, md_inline)] if caught else [])]).strip("\n"))
    derived = meaning_rows(r.get("meaning"), trigger_label(r))
    if derived:
        out += [f"## {TITLE}", "", *(f"- **{label}:** {split_code(text, md_text, md_inline)}" for label, text in derived),
                "", f"*{md_text(NOTE)}*", ""]
    curated_at = len(out)
    sec("Solutions", bullets(ex.get("solutions") or []))
    fix = ex.get("example_fix") or {}
    fix_lang = code_language(fix.get("before", "") + "\n" + fix.get("after", ""))
    sec("Example fix", f"Before:\n\n{md_code(fix.get('before', ''), fix_lang)}\n\nAfter:\n\n{md_code(fix.get('after', ''), fix_lang)}"
        if fix.get("before") or fix.get("after") else "")
    sec("Defensive patterns", "\n\n".join(markdown_markdown(p["strategy"]) + ("\n\n" + md_code(p["code"], code_language(p["code"])) if p.get("code") else "")
                                          for p in ex.get("defensive_patterns") or []))
    sec("Prevention", bullets(ex.get("prevention") or []))
    when = ex.get("when_it_happens") or {}
    sec("When it happens", "\n\n".join(filter(None, [markdown_markdown(when.get("trigger") or ""), bullets(when.get("common_situations") or [])])))
    if len(out) == curated_at and not ex.get("what_it_means"):
        out += [f"*{NOT_EXPLAINED}*", ""]
    out += meaning_markdown(r)
    rel = [f"- [{md_text(x['title'])}]({x['id']}.md) ({md_text(x['reason'])})" if x["id"] in titles else f"- {md_text(x['title'])} ({md_text(x['reason'])})"
           for x in r.get("related", [])]
    sec("Related errors", "\n".join(rel))
    commit, dated = shown_source(prov)
    out += ["---", "", f"Last changed in {md_text(prov['repo'])} at {md_inline(commit)} ({SINCE}){md_text(dated)}. "
            f"[This entry as JSON](<{record_href(data, r['id'])}>)", ""]
    return "\n".join(out)


def index_markdown(records: list[dict[str, Any]], manifest: dict[str, Any], repo: str) -> str:
    lines = [f"# {md_text(repo)}: {len(records)} errors", "", "| Error | Exception | Where |", "| --- | --- | --- |"]
    for r in records:
        title = md_text(r["title"]).replace("|", "\\|")
        lines.append(f"| [{title}](errors/{r['id']}.md) | {md_inline(r['exception']['name'])} | "
                     f"{md_inline(r['location']['path'] + ':' + str(r['location']['line']))} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- writing


def render_site(dataset: Path, out: Path, fmt: str = "html", progress: Callable[[str], None] = lambda _: None,
                changelog: Path | None = None, data: str | None = None) -> int:
    """Make ``out`` the site of one dataset; returns the number of entry pages.

    The site is written the way a dataset is (:func:`output.write_tree`): into a hidden sibling,
    then swapped in whole, so ``out`` is always the previous site or the complete new one, and
    holds nothing else (no page of an entry that is gone, nothing planted in it). What is
    replaced must be a site errcat render made, an empty directory, or nothing: see
    :func:`may_replace`. ``changelog`` (the Markdown ``errcat sync --changelog`` wrote) is shown
    on the index. ``data`` is where the site's readers reach the dataset (see :func:`data_url`).
    """
    from crawler.publish.dataset import MANIFEST, read_consumed
    from crawler.publish.writer import write_tree

    if not (dataset / MANIFEST).is_file():
        raise UsageError(f"not a dataset (no manifest.json): {dataset}")
    changes = read_changelog(changelog) if changelog is not None else None
    # Validated before use, as `adopt` validates an artifact: ids become file names below,
    # permalinks become links, and each page links to its record's file "as JSON".
    read = read_consumed(dataset)
    valid = read.manifest
    manifest = valid.model_dump(mode="json")
    repo = f"{valid.repo.owner}/{valid.repo.name}"
    records = sorted((r.model_dump(mode="json") for r in read.records), key=lambda r: r["id"])
    titles = {r["id"]: r["title"] for r in records}
    by_id = {r["id"]: r for r in records}  # a replacement's page says how the other record differs
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
                    yield f"errors/{r['id']}.md", entry_markdown(r, titles, base, by_id).encode()
                    pages.advance()
                yield "index.md", index_markdown(records, manifest, repo).encode()
            else:
                assert index is not None
                for r in records:
                    yield f"errors/{r['id']}.html", entry_html(r, repo, titles, base, by_id).encode()
                    pages.advance()
                yield "index.html", index_html(records, manifest, repo, changes).encode()
                yield "style.css", (static_file("site.css") + _FORMATTER_CSS + "\n").encode()
                yield "search.js", static_file("search.js").encode()
                yield "index.js", static_file("index.js").encode()
                yield "search-index.js", f"window.ERRCAT_SEARCH = {script_json(_search_payload(index, foreign))};\n".encode()

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
            raise UsageError(f"refusing to replace {out}: not empty and not a site errcat render made "
                             f"(no {SITE_MARK} in it); pass a new or empty directory")


def _search_payload(index: SearchIndex, foreign: Sequence[Any] = ()) -> dict[str, Any]:
    """What the search box needs of the index (sites stay in search.json), and the validated
    foreign errors (foreign.py) it answers "not raised by" with."""
    from crawler.consume.site_search import caught_as, own_ancestors, ranking_fields

    catch = caught_as(index)
    # pairs, not an object: a name from the crawled code ("__proto__", "constructor") is no key to trust in JS
    return {"repo": index.repo, "commit": index.commit, "catch": list(catch.items()), "entries": [
        {"id": e.id, "title": e.title, "exception": e.exception, "text": e.text, "fragments": e.fragments,
         "starts_literal": e.starts_literal, "ends_literal": e.ends_literal, "anchors": e.anchors, "tokens": e.tokens,
         **ranking_fields(e), **own_ancestors(e, catch),
         # only where there are some: few entries are assembled messages
         **({"alternatives": [{"fragments": a.fragments, "anchors": a.anchors} for a in e.alternatives]} if e.alternatives else {})}
        for e in index.entries],
        "foreign": [{"name": f.name, "origin": f.origin, "match": f.match, "explanation": f.explanation, "check": list(f.check)}
                    for f in foreign]}
