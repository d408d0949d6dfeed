"""A dataset as a static site (``errcat render``): one page per entry, an index, offline search.

Layout of the site directory::

    index.html            every entry, with the search box
    errors/<id>.html      one catalogue page per entry (sections in the order of page.py)
    search-index.js       what the search box needs of the dataset's search index, as a script
                          (file:// pages cannot fetch JSON)
    search.js, style.css  the search box (plain JS, no network) and the styles
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
from crawler.catalogue.evidence import issue_number
from crawler.consume.history_page import TITLE as HISTORY
from crawler.consume.history_page import Others, Piece, history_note, history_rows, inherited, inherited_note
from crawler.consume.kind_words import SINCE, article, explained_note, kind_text, shows_exception, surface_rows, trigger_label, unknown_exception
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
    shown_message,
    split_code,
    swallowed,
    tracker_links,
)
from crawler.consume.meaning_page import rows as meaning_rows
from crawler.consume.site_html import code_html, esc, layout, safe_url
from crawler.consume.site_index import INDEX_JS, MAX_CHANGELOG_CHARS, index_html
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

STYLE = """
*,*::before,*::after{box-sizing:border-box}
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;color:#1b1b1b;overflow-wrap:anywhere}
header.site{display:flex;gap:.5rem 1rem;align-items:baseline;flex-wrap:wrap;border-bottom:1px solid #ddd;padding-bottom:.5rem}
header.site a.home{font-weight:600;text-decoration:none}
a{color:#0b57d0}
a:focus-visible,summary:focus-visible,textarea:focus-visible,select:focus-visible,input:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
h1{font-size:1.4rem}
h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #eee}
code,pre{font:13px/1.4 ui-monospace,monospace}
pre{white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%}
.message{background:#f6f6f6;padding:.5rem .75rem;border-left:3px solid #c33}
.muted{color:#595959;font-style:italic}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;min-width:0}
@media (max-width:30rem){dl.facts{grid-template-columns:minmax(0,1fr)}dl.facts dd{margin-left:1rem}}
.highlight{background:#fafafa;padding:.25rem .5rem}
.highlight .hll{background:#fff3b0;display:block}
.highlight .ln{color:#6e6e6e;padding-right:.8em;user-select:none}
#search{width:100%;font-size:1rem;padding:.4rem;resize:vertical;font-family:inherit}
#results{list-style:none;padding:0}
#results li{padding:.25rem 0;border-bottom:1px solid #f0f0f0}
#results li a[aria-selected=true]{background:#e8f0fe}
.badge{font-size:.75rem;padding:0 .35rem;border-radius:.3rem;background:#eee}
.controls{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;margin:.5rem 0}
.controls fieldset{border:0;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
.controls legend{font-weight:600;float:left;margin-right:.5rem}
.count{font-size:.8rem;color:#444;background:#eee;border-radius:.6rem;padding:0 .45rem}
details.group{border-bottom:1px solid #eee;padding:.2rem 0}
details.group summary{cursor:pointer}
ul.entries{list-style:none;padding-left:.75rem;margin:.25rem 0}
ul.entries li{padding:.2rem 0;border-bottom:1px solid #f4f4f4}
ul.entries .meta{display:block;font-size:.8rem;color:#555}
ul.exceptions{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
.lead{font-size:1.05rem}
#results mark{background:#fff3b0;color:inherit}
#results .check{font-size:.85rem;padding-left:1rem}
ol.reported li{padding:.15rem 0}
ol.reported .meta{display:block;font-size:.8rem;color:#555}
.facets{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:.5rem 1.5rem}
.facet h3{font-size:1rem;margin:.5rem 0 .25rem}
.facet ul{list-style:none;padding:0;margin:0}
.facet li{padding:.1rem 0}
.st-explained{color:#1b5e20}.st-drafted{color:#8a5a00}.st-derived{color:#0d47a1}.retired{color:#8a1c1c}
.chart-box{overflow:hidden}
svg.chart{max-width:100%;height:auto}
table.numbers{border-collapse:collapse}
table.numbers td,table.numbers th{padding:.1rem .6rem;border-bottom:1px solid #eee;text-align:right}
"""

SEARCH_JS = r"""
(function () {
  "use strict";
  var data = window.ERRCAT_SEARCH || {entries: []};
  var base = document.body.getAttribute("data-root") || "";
  var box = document.getElementById("search");
  var list = document.getElementById("results");
  if (!box || !list) return;
  // Bounds on what one search reads, so that no query (a link's ?q= included) can hang the page.
  var MAX_QUERY = 65536, MAX_WORDS = 256;
  var BEGINNING = "no full match: the message is its beginning";
  // sink.visible (crawler/base/sink.py) on one line, as every page shows crawled text: C0 and C1
  // controls but tab, bidi controls (a right-to-left override reorders the results after it),
  // line separators and lone surrogates become escapes (\u202e, \x1b, \n), never characters.
  var HIDDEN = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]/gu;
  function visible(text) {
    return String(text).replace(HIDDEN, function (c) {
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      var n = c.charCodeAt(0);
      return n < 0x100 ? "\\x" + ("0" + n.toString(16)).slice(-2) : "\\u" + ("000" + n.toString(16)).slice(-4);
    });
  }
  window.errcatVisible = visible;
  // Where the variable parts of a template lie in a message ([start, end] pairs), or null if it
  // does not match: each literal fragment at its leftmost occurrence after the previous one, the
  // first at the start when startsLiteral, the last at the end when endsLiteral. The same function
  // as fragment_gaps in crawler/match.py; linear, where the entry's regex backtracks exponentially
  // on adjacent fields.
  function errcatGaps(frags, startsLiteral, endsLiteral, message) {
    var n = message.length, k = frags.length, pos = 0, first = 0, limit = n, last = k, gaps = [];
    if (!k) return [[0, n]];
    if (startsLiteral) {
      if (!message.startsWith(frags[0])) return null;
      pos = frags[0].length; first = 1;
    }
    if (endsLiteral) {
      if (startsLiteral && k === 1) return n === frags[0].length ? [] : null;
      if (!message.endsWith(frags[k - 1])) return null;
      limit = n - frags[k - 1].length; last = k - 1;
    }
    for (var i = first; i < last; i++) {
      var j = message.indexOf(frags[i], pos);
      if (j < 0 || j + frags[i].length > limit) return null;
      gaps.push([pos, j]);
      pos = j + frags[i].length;
    }
    if (pos > limit) return null;
    gaps.push([pos, limit]);
    return gaps;
  }
  window.errcatGaps = errcatGaps;
  // What a paste may have lost of a template's last literal: its trailing whitespace and a full
  // stop before it (not an ellipsis). The same function as _dropped_tail in crawler/match.py.
  function droppedTail(fragment) {
    var bare = fragment.replace(/\s+$/, "");
    if (bare.endsWith(".") && !bare.endsWith("..")) bare = bare.slice(0, -1);
    return fragment.slice(bare.length);
  }
  window.errcatDroppedTail = droppedTail;
  function words(s) { return (s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []); }
  // The query's distinct words (the first MAX_WORDS) with their counts, as [" w ", " w", count]:
  // tokens hold no spaces, so in " " + tokens.join(" ") + " " the first is a whole token and the
  // second the start of one.
  function queryWords(q) {
    var counts = new Map();
    words(q).forEach(function (w) {
      if (counts.has(w)) counts.set(w, counts.get(w) + 1);
      else if (counts.size < MAX_WORDS) counts.set(w, 1);
    });
    var out = [];
    counts.forEach(function (c, w) { out.push([" " + w + " ", " " + w, c]); });
    return out;
  }
  // Reading a paste as match.py's paste_readings does (paste.py for the lines): known line
  // prefixes stripped (each anchored and bounded, tried once per line), then the readings, each
  // {m: message, x: exception named, src: where it was read, f: [path, line, function] of the
  // traceback frame it follows, t: cut short, ln: its line (a later line is nearer the end)}.
  var PREFIXES = [
    /^[│|┃]\s?/,
    /^[\w.-]{1,64}\s{1,8}\|\s?/,
    /^\[rank\d{1,6}\]:\s?/,
    /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S{1,64} [\w.-]{1,64}\[\d{1,10}\]: /,
    /^\((?:[\w.-]{1,64} )?pid=\d{1,10}(?:, [^()\n]{0,200})?\)\s?/,
    /^ray::[\w.]{1,200}\(\)(?: \(pid=\d{1,10}(?:, [^()\n]{0,500})?\))?:?\s?/,
    /^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,6})? )?(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: \d{1,10})?(?: \d\d-\d\d)?(?: \d\d:\d\d:\d\d(?:\.\d{1,6})?)? )?\[?[\w.\/-]{1,200}\.py:\d{1,7}(?:\]|\[\]) ?/,
    /^(?:DEBUG|ERROR|INFO|WARNING|CRITICAL):\s{1,8}/,
    /^\[?[0-9A-Fa-f.:]{2,45}\]?:\d{1,5} - /,
    /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)? /,
    /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]\s?/,
    /^(?:- )?[\w.<>-]{1,64} - (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - /,
    /^E {3,16}/
  ];
  var EXC_END = /(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)$/, LEVEL = /\b(WARNING|WARN|ERROR|CRITICAL)\b/;
  var MAX_LINES = 4096, MAX_CANDIDATES = 12, MAX_CONTINUATION = 12, MAX_LOG_LINES = 12, MAX_READINGS = 64;
  var FIELD_WEIGHT = 16, MIN_SUPPORT = 0.5, AGREE = 0.1, LIMIT = 10;
  var ELLIPSIS = /(?:\.\.\.|\u2026)$/;
  // paste._unmarked: the Markdown a paste was wrapped in, before anything else on the line
  var QUOTE_OR_HEADING = /^(?:[ \t]{0,8}(?:>[ \t]?){1,16}|[ \t]{0,3}#{1,6}[ \t]{1,8})/, FENCE = /^(?:```|~~~)[\w+.-]{0,32}$/;
  var WRAPPERS = ["```", "**", "__", "`", "*"];
  var EXC_HEAD = /^[A-Za-z_][\w.]{0,200}(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault): /;
  function unmarked(line) {
    var m = QUOTE_OR_HEADING.exec(line);
    if (m && m[0].length) line = line.slice(m[0].length);
    if (FENCE.test(line.trim())) return "";
    for (var i = 0; i < WRAPPERS.length; i++) {
      var mark = WRAPPERS[i];
      if (!line.startsWith(mark)) continue;
      var inner = line.length > 2 * mark.length && line.endsWith(mark) ? line.slice(mark.length, -mark.length) : null;
      if (inner && inner.trim() === inner && (inner.indexOf(mark) < 0 || EXC_HEAD.test(inner))) return inner;
      break;
    }
    // an exception line a reporter put in double quotes, as paste._unmarked reads it
    if (line.length > 2 && line[0] === '"' && line[line.length - 1] === '"') {
      var quoted = line.slice(1, -1);
      if (quoted.trim() === quoted && EXC_HEAD.test(quoted)) return quoted;
    }
    return line;
  }
  // paste.plain_typography: typographic quotes, primes, dashes, an ellipsis and fixed-width
  // spaces as ASCII, zero-width characters dropped
  var TYPOGRAPHY = [[/[\u2018\u2019\u201a\u201b\u2032\u02bc]/g, "'"], [/[\u201c\u201d\u201e\u201f\u2033]/g, '"'],
                    [/[\u2010-\u2015\u2212]/g, "-"], [/\u2026/g, "..."], [/[\u00a0\u2007\u202f\u2002\u2003\u2009\u200a\u3000]/g, " "],
                    [/[\u200b\u200c\u200d\u2060\ufeff\u00ad]/g, ""]];
  function plainTypography(text) { TYPOGRAPHY.forEach(function (t) { text = text.replace(t[0], t[1]); }); return text; }
  window.errcatPlainTypography = plainTypography;
  // match.fold_case: ASCII letters in lower case, every position kept
  function foldCase(text) { return text.replace(/[A-Z]+/g, function (c) { return c.toLowerCase(); }); }
  // [the line without its prefixes, the level the prefixes name (paste.logged) or null]
  function stripLine(line) {
    var level = null;
    line = unmarked(line.replace(/\r$/, "").replace(/\^M$/, "").replace(/\s+$/, ""));
    for (var n = 0; n < 8; n++) {
      // paste._prefix_end: indentation goes with a prefix after it, and stays before anything else
      var hit = false, rest = line.replace(/^[ \t]*/, "");
      for (var i = 0; i < PREFIXES.length && !hit; i++) {
        var m = PREFIXES[i].exec(rest);
        if (m && m[0].length) {
          var l = LEVEL.exec(m[0]);
          if (l) level = l[1] === "WARN" ? "WARNING" : l[1];
          line = rest.slice(m[0].length); hit = true;
        }
      }
      if (!hit) break;
    }
    return [line, level];
  }
  // and a product's actor tag after an exception's name, as paste.clean drops it (_ACTOR_TAG)
  function cleanLine(line) {
    return stripLine(line)[0].replace(/[│┃]$/, "").replace(/\s+$/, "").replace(/(: )\[address=[^\]\s]{1,100}, pid=\d{1,10}\] /g, "$1");
  }
  function leaf(name) { return name.slice(name.lastIndexOf(".") + 1); }
  function exceptionLine(line) {
    var t = line.trim(), m;
    if ((m = /^Exception in worker \S{1,100} while processing method \w{1,100}: ([\s\S]*)$/.exec(t))) return exceptionLine(m[1]) || [null, m[1]];
    if ((m = /^([A-Za-z_][\w.]{0,200}?(?:Error|Exception))\((['"])([\s\S]*?)\2?\)?$/.exec(t))) return [leaf(m[1]), m[3]];
    if ((m = /^([A-Za-z_][\w.]{0,200}?)(?:\(([A-Za-z_]\w{0,100})\))?: ([\s\S]*)$/.exec(t))) {
      if (m[2] && leaf(m[1]).indexOf("RayTaskError") === 0) return [m[2], m[3]];
      if (!m[2] && EXC_END.test(leaf(m[1]))) return [leaf(m[1]), leaf(m[1]) === "KeyError" ? unrepr(m[3]) : firstArgument(m[3])];
    }
    if ((m = /^[\w.\- ]{1,100}: error: (?:argument [^\s:]{1,100}: )?([\s\S]*)$/.exec(t))) return ["ArgumentError", m[1]];
    // paste._INNER_EXC: after a prefix no pattern strips, the first exception named
    var inner = /(?<=[ \t\]|)])([A-Za-z_][\w.]*)(?:\(([A-Za-z_]\w{0,100})\))?: /g;
    while ((m = inner.exec(t))) {
      var name = leaf(m[1]), after = t.slice(m.index + m[0].length);
      if (m[2] && name.indexOf("RayTaskError") === 0) return [m[2], after];
      if (!m[2] && EXC_END.test(name)) return [name, after];
    }
    return null;
  }
  // paste.unrepr: a KeyError's line is its message's repr ("KeyError: 'no model named x'")
  var REPR_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"};
  function unrepr(m) {
    var q = m.charAt(0);
    if (m.length < 2 || (q !== "'" && q !== '"') || m.charAt(m.length - 1) !== q) return m;
    var body = m.slice(1, -1), out = [], i = 0;
    while (i < body.length) {
      var c = body.charAt(i);
      if (c === q) return m;
      if (c !== "\\") { out.push(c); i++; continue; }
      var n = body.charAt(i + 1);
      if (n && Object.prototype.hasOwnProperty.call(REPR_ESCAPES, n)) { out.push(REPR_ESCAPES[n]); i += 2; continue; }
      var w = n === "x" ? 2 : n === "u" ? 4 : n === "U" ? 8 : 0, digits = body.substr(i + 2, w);
      if (!w || digits.length !== w || !/^[0-9a-fA-F]+$/.test(digits)) return m;
      var code = parseInt(digits, 16);
      if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return m;
      out.push(String.fromCodePoint(code)); i += 2 + w;
    }
    return out.join("");
  }
  // paste.first_argument: an exception raised with several arguments prints their tuple; its
  // first element, a string's repr, is the message (read by unrepr, never evaluated)
  var FIRST_OF_TUPLE = /^\(('[^'\\\n]{0,4096}(?:\\.[^'\\\n]{0,4096}){0,512}'|"[^"\\\n]{0,4096}(?:\\.[^"\\\n]{0,4096}){0,512}"), /;
  function firstArgument(m) {
    if (m.charAt(0) !== "(" || m.charAt(m.length - 1) !== ")" || m.length > 8192) return m;
    var t = FIRST_OF_TUPLE.exec(m);
    if (!t) return m;
    var first = unrepr(t[1]);
    return first === t[1] ? m : first;
  }
  function withoutParameter(m) { return m.replace(/ \(parameter=[^()\n]{0,200}, value=[^\n]{0,1000}\)$/, ""); }
  // paste.py's _raise_message: a traceback cut before its exception line ends in a frame whose
  // `raise X("...", "...")` holds the message as string literals.
  var FRAME = /^\s*File "([^"\n]{1,1000})", line (\d{1,9}), in (\S{1,200})/, RAISE = /^\s*raise ([A-Za-z_][\w.]{0,200})\(/;
  var CHAIN = /^(?:The above exception was the direct cause|During handling of the above exception|Traceback \(most recent call last\))/;
  var LITERAL = /[rRbBfFuU]{0,2}(?:"([^"\\\n]*(?:\\.[^"\\\n]*)*)"?|'([^'\\\n]*(?:\\.[^'\\\n]*)*)'?)/g;
  function raiseMessage(lines) {
    var m = lines.length ? RAISE.exec(lines[0]) : null;
    if (!m) return null;
    var parts = [];
    for (var k = 0; k < lines.length; k++) {
      var line = k ? lines[k].trim() : lines[0].slice(m[0].length).trim();
      if (k && !/^(?:'|"|f'|f"|r'|r")/.test(line)) break;
      line.replace(LITERAL, function (all, dq, sq) { parts.push(dq !== undefined ? dq : (sq || "")); return all; });
    }
    var message = parts.join("").trim();
    return message.length >= 4 ? [leaf(m[1]), message] : null;
  }
  // paste.candidates: every exception line, the last first, with the lines continuing it and the
  // frame printed before it; and the message of the raise a cut traceback ends in.
  function lineCandidates(lines) {
    var found = [], frame = null;
    for (var i = 0; i < lines.length; i++) {
      var f = FRAME.exec(lines[i]);
      if (f) { frame = [i, [f[1], +f[2], f[3]]]; continue; }
      var c = exceptionLine(lines[i]), bare = /^([A-Za-z_][\w.]{0,200})$/.exec(lines[i]);
      // a bare "raise X" or "assert" prints the exception's name alone, just after its frame
      if (!c && bare && frame && i - frame[0] <= 3 && EXC_END.test(bare[1])) c = [leaf(bare[1]), ""];
      if (!c) continue;
      var more = [];
      for (var j = i + 1; j < lines.length && j <= i + MAX_CONTINUATION; j++) {
        var nxt = lines[j];
        if (!nxt.trim() || /^\s*File "[^"\n]+", line \d+/.test(nxt) || CHAIN.test(nxt) || exceptionLine(nxt)) break;
        more.push(nxt);
      }
      found.push({x: c[0], m: c[1].trim(), ln: i, cont: more.length ? [c[1]].concat(more).join("\n").trim() : "",
                  f: frame ? frame[1] : null, src: "line"});
      frame = null;
    }
    if (frame) {
      var raised = raiseMessage(lines.slice(frame[0] + 1, frame[0] + 10));
      if (raised) found.push({x: raised[0], m: raised[1], ln: frame[0], cont: "", f: frame[1], src: "raise"});
    }
    return found.reverse().slice(0, MAX_CANDIDATES);
  }
  // match.py's _last_traceback: [exception, message, last frame] of the text's last traceback
  var TB = "Traceback (most recent call last):";
  function lastTraceback(text) {
    var start = text.lastIndexOf(TB);
    if (start < 0) return null;
    var block = text.slice(start + TB.length), frames = /^[^\S\n]*File "([^"\n]{1,1000})", line (\d{1,9}), in (\S{1,200})/gm, f, last = null;
    while ((f = frames.exec(block))) last = f;
    if (last) block = block.slice(last.index + last[0].length);
    var lines = block.split("\n"), i = last ? 1 : 0;
    while (i < lines.length && (!lines[i].trim() || lines[i][0] === " " || lines[i][0] === "\t")) i++;
    var rest = lines.slice(i).join("\n").replace(/\s+$/, ""), nl = rest.indexOf("\n");
    var m = /^([A-Za-z_][\w.]*)(?::(?: ([\s\S]*))?)?$/.exec(nl < 0 ? rest : rest.slice(0, nl));
    if (!m) return null;
    return [m[1], (m[2] || "") + (nl < 0 ? "" : "\n" + rest.slice(nl + 1)), last ? [last[1], +last[2], last[3]] : null];
  }
  var EXC_PREFIX = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Failure|Fault)): ?([\s\S]*)$/;
  var ANY_PREFIX = /^([A-Za-z_][\w.]*): ([\s\S]*)$/;
  // match.py's _inner_readings: a pydantic listing's errors, and a server's JSON error body's
  // message (the first "message" of the text, Python's repr of one included)
  function innerReadings(message, outer, depth) {
    var out = [], head = /^[^\S\n]*(Value error|Assertion failed), /gm, h, pos = 0;
    while ((h = head.exec(message)) && out.length < 32) {
      if (h.index < pos) continue;
      var end = / \[type=(?:value_error|assertion_error)\b/g;
      end.lastIndex = h.index + h[0].length;
      var e = end.exec(message);
      if (!e) break;
      var inner = message.slice(h.index + h[0].length, e.index).trim();
      out.push(reading(inner, h[1] === "Value error" ? "ValueError" : "AssertionError", "pydantic", outer.f, ELLIPSIS.test(inner)));
      pos = e.index + e[0].length;
    }
    // match._pydantic_unmarked: the last line alone, without its [type=...] marker
    var lines = message.replace(/\s+$/, "").split("\n");
    if (lines.length > 1 && /^[^\S\n]*For further information visit \S*$/.test(lines[lines.length - 1])) lines.pop();
    var u = /^[^\S\n]*(Value error|Assertion failed), ([\s\S]*)$/.exec(lines[lines.length - 1]);
    if (u && !/ \[type=(?:value_error|assertion_error)\b/.test(u[2]) && u[2].trim() && out.length < 32) {
      out.push(reading(u[2].trim(), u[1] === "Value error" ? "ValueError" : "AssertionError", "pydantic", outer.f, ELLIPSIS.test(u[2].trim())));
    }
    var j = depth < 2 && message.indexOf("{") >= 0 && /['"](?:message|detail)['"]: ?(?:"((?:[^"\\\n]|\\.){0,4096})"|'((?:[^'\\\n]|\\.){0,4096})')/.exec(message);
    if (j) {
      var body = j[1] !== undefined ? j[1] : j[2];
      try { body = j[1] !== undefined ? JSON.parse('"' + body + '"') : body.replace(/\\(['\\])/g, "$1"); } catch (err) { /* kept as written */ }
      var r = reading(body.trim(), null, "json", outer.f, ELLIPSIS.test(body.trim()));
      out.push(r);
      out = out.concat(innerReadings(r.m, r, depth + 1));
      var x = EXC_PREFIX.exec(r.m);
      if (x) out.push(reading(x[2].trim(), leaf(x[1]), "json", outer.f, false));
    }
    return out;
  }
  function reading(m, x, src, f, t, ln) {
    return {m: m, x: x, src: src, f: f || null, t: !!t, ln: ln === undefined ? -1 : ln};
  }
  // match.paste_readings: the paste's readings, then (when it has typographic quotes, dashes or
  // spaces) those of it in ASCII too, each at most half the readings
  function readingsOf(text) {
    var read = readingsAsPasted(text, MAX_READINGS), plain = plainTypography(text);
    if (plain === text) return read;
    var half = readingsAsPasted(text, MAX_READINGS / 2), seen = new Set(half.readings.map(key));
    readingsAsPasted(plain, MAX_READINGS / 2).readings.forEach(function (r) { if (!seen.has(key(r))) { seen.add(key(r)); half.readings.push(r); } });
    return half;
  }
  function key(r) { return JSON.stringify([r.m, r.x, r.src, r.f, r.t, r.ln]); }
  function readingsAsPasted(text, most) {
    var raw = text.replace(/\r\n/g, "\n").split("\n").slice(-MAX_LINES), lines = raw.map(cleanLine);
    var out = [], seen = new Set();
    function push(r) {
      var k = key(r);
      if (!seen.has(k) && out.length < most) { seen.add(k); out.push(r); }
    }
    function add(message, x, src, f) {
      message = message.trim();
      var r = reading(message, x ? leaf(x) : null, src, f, ELLIPSIS.test(message));
      // each also without VLLMValidationError's "(parameter=..., value=...)" (a server's body has it)
      [r].concat(innerReadings(message, r, 0)).forEach(function (one) {
        push(one);
        var bare = withoutParameter(one.m);
        if (bare !== one.m) push(reading(bare, one.x, one.src, one.f, one.t, one.ln));
      });
    }
    var text2 = lines.join("\n").replace(/^\n+|\n+$/g, ""), tb = lastTraceback(text2);
    if (tb) add(tb[1], tb[0], "traceback", tb[2]);
    else {
      var stripped = text2.trim(), m = EXC_PREFIX.exec(stripped) || ANY_PREFIX.exec(stripped);
      if (m) add(m[2], m[1], "plain");
      else {
        var ls = stripped.split("\n");
        for (var i = ls.length - 1; i > 0; i--) {
          var mm = EXC_PREFIX.exec(ls[i]);
          if (mm) { add([mm[2]].concat(ls.slice(i + 1)).join("\n"), mm[1], "plain"); break; }
        }
      }
      add(stripped, null, "plain");
    }
    // a log line's level says what it is: the message of a log entry of that level
    raw.filter(function (l) { return l.trim(); }).slice(-MAX_LOG_LINES).reverse().forEach(function (l) {
      var s = stripLine(l);
      if (s[1] && s[0].trim() && !exceptionLine(s[0])) push(reading(s[0].trim(), s[1], "log"));
    });
    lineCandidates(lines).forEach(function (c) {
      var bare = withoutParameter(c.m);
      // (an empty message: a bare name after its frame, a message-less raise)
      [c.m, bare, c.cont].filter(function (m, k, all) { return (m || (!k && c.f)) && all.indexOf(m) === k; }).forEach(function (m) {
        push(reading(m, c.x, c.src, c.f, ELLIPSIS.test(m) || c.src === "raise", c.ln));
      });
    });
    return {readings: out, cleaned: lines.join("\n")};
  }
  window.errcatReadings = function (t) { return readingsOf(t).readings; };
  // match.py's _prefix_cover: literal characters matched when the message is the start of one
  // this template makes (it may end inside a fragment; the first MAX_OVERLAP characters of one
  // are looked for at its end); -covered-1 when it ends inside a field with more to come; null
  // when it cannot be such a start.
  var MAX_OVERLAP = 1024;
  function prefixCover(frags, startsLiteral, endsLiteral, message) {
    var pos = 0, covered = 0, afterVar = !startsLiteral, n = message.length;
    if (!frags.length) return 0;
    for (var i = 0; i < frags.length; i++) {
      var text = frags[i];
      if (i > 0) afterVar = true;
      if (pos >= n) return covered;
      if (!afterVar) {
        if (message.startsWith(text, pos)) { pos += text.length; covered += text.length; }
        else if (text.startsWith(message.slice(pos))) return covered + n - pos;
        else return null;
      } else {
        var j = message.indexOf(text, pos);
        if (j < 0) {
          for (var k = Math.min(text.length - 1, n - pos, MAX_OVERLAP); k > 0; k--) {
            if (message.endsWith(text.slice(0, k))) return covered + k;
          }
          return n - pos > 1 ? -covered - 1 : covered;
        }
        pos = j + text.length; covered += text.length;
      }
      afterVar = false;
    }
    return (!endsLiteral || pos === n) ? covered : null;
  }
  // difflib.SequenceMatcher(None, a, b).ratio() and .quick_ratio() over code points, as
  // match.py's nearest computes them (autojunk: in a b of 200 or more, elements more frequent
  // than 1% + 1 are left out of the index, as difflib does).
  function seqMatcher(a, b) {
    a = Array.from(a); b = Array.from(b);
    var b2j = new Map(), n = b.length;
    b.forEach(function (c, j) { if (!b2j.has(c)) b2j.set(c, []); b2j.get(c).push(j); });
    if (n >= 200) {
      var ntest = Math.floor(n / 100) + 1;
      Array.from(b2j.keys()).forEach(function (c) { if (b2j.get(c).length > ntest) b2j.delete(c); });
    }
    function longest(alo, ahi, blo, bhi) {
      var besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
      for (var i = alo; i < ahi; i++) {
        var next = new Map(), js = b2j.get(a[i]) || [];
        for (var t = 0; t < js.length; t++) {
          var j = js[t];
          if (j < blo) continue;
          if (j >= bhi) break;
          var k = (j2len.get(j - 1) || 0) + 1;
          next.set(j, k);
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    return {
      ratio: function () {
        var total = a.length + b.length, matched = 0, queue = [[0, a.length, 0, n]];
        if (!total) return 1;
        while (queue.length) {
          var q = queue.pop(), m = longest(q[0], q[1], q[2], q[3]);
          if (!m[2]) continue;
          matched += m[2];
          if (q[0] < m[0] && q[2] < m[1]) queue.push([q[0], m[0], q[2], m[1]]);
          if (m[0] + m[2] < q[1] && m[1] + m[2] < q[3]) queue.push([m[0] + m[2], q[1], m[1] + m[2], q[3]]);
        }
        return 2 * matched / total;
      }
    };
  }
  window.errcatRatio = function (a, b) { return seqMatcher(a, b).ratio(); };
  // match.py's Matcher.nearest: among the NEAREST_POOL entries sharing the message's rarest
  // words (idf-weighted), the most similar wordings: the template as a message shows it
  // (fields as "…"), whole and cut to the message's length.
  var NEAREST_POOL = 12, postings = null;
  // An assembled message with no literal text of its own ("\n".join(errors)) is matched by its
  // pieces, as match.py's Matcher does: each piece's fragments in order, anywhere in the message.
  function shapes(e) {
    if (!e.shapes) e.shapes = [e].concat((e.alternatives || []).map(function (a) {
      return {fragments: a.fragments, anchors: a.anchors, starts_literal: false, ends_literal: false};
    }));
    return e.shapes;
  }
  function postingLists() {
    if (postings) return postings;
    postings = new Map();
    data.entries.forEach(function (e, n) {
      new Set(words(shapes(e).map(function (s) { return s.fragments.join(" "); }).join(" "))).forEach(function (w) {
        if (!postings.has(w)) postings.set(w, []);
        postings.get(w).push(n);
      });
    });
    return postings;
  }
  function sharingWords(message, limit) {
    var lists = postingLists(), total = data.entries.length || 1, scores = new Map();
    var mine = Array.from(new Set(words(message))).sort().filter(function (w) { return lists.has(w); });
    mine.sort(function (x, y) { return lists.get(x).length - lists.get(y).length; });
    mine.slice(0, 12).forEach(function (w) {
      var plist = lists.get(w), idf = Math.log(1 + total / plist.length);
      plist.forEach(function (n) { scores.set(n, (scores.get(n) || 0) + idf); });
    });
    return Array.from(scores.keys()).sort(function (x, y) { return scores.get(y) - scores.get(x); }).slice(0, limit)
      .map(function (n) { return data.entries[n]; });
  }
  function nearest(message) {
    message = Array.from(message).slice(0, 500).join("");
    var size = Array.from(message).length;
    return sharingWords(message, NEAREST_POOL).map(function (e) {
      var best = 0;
      shapes(e).forEach(function (s) {
        if (!s.fragments.length && s !== e) return;
        var literal = Array.from(s.fragments.length ? s.fragments.join("\u2026") : e.text);
        var whole = seqMatcher(message, literal.slice(0, 500).join("")).ratio();
        var cut = seqMatcher(message, literal.slice(0, size + 5).join("")).ratio();
        best = Math.max(best, whole, 0.95 * cut);
      });
      return [e, best];
    });
  }
  window.errcatNearest = function (m) { return nearest(m).map(function (p) { return [p[0].id, p[1]]; }); };
  // Ranking as match.py's: each (entry, reading) that fits gets match.Match.key, compared
  // element by element: [strong, full, coverage, exception named (2 same, 1 an ancestor),
  // frame in the entry's function, not a Rust check in a Python traceback, raise > response >
  // log, fewer fields]; the best per entry, ties in id order.
  var DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", encoder = new TextEncoder();
  // site_search.code: FNV-1a over the UTF-8 bytes, folded to 24 bits, as four characters
  function siteCode(text) {
    var h = 0x811c9dc5, bytes = encoder.encode(text);
    for (var i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
    h = ((h >>> 24) ^ (h & 0xffffff)) >>> 0;
    return DIGITS[(h >> 18) & 63] + DIGITS[(h >> 12) & 63] + DIGITS[(h >> 6) & 63] + DIGITS[h & 63];
  }
  window.errcatSiteCode = siteCode;
  var KIND_RANK = {log: 0, response: 1};
  function kind(e) { return e.k || "raise"; }
  var catchTable = null;
  function catchAs(e) {
    if (!catchTable) catchTable = new Map(data.catch || []);
    return e.c || catchTable.get(e.exception) || [];
  }
  function fieldCount(s) {
    if (s.f !== undefined) return s.f;
    var k = s.fragments.length;
    return k ? k - 1 + (s.starts_literal ? 0 : 1) + (s.ends_literal ? 0 : 1) : 1;
  }
  // A frame's codes: of each suffix of its path (match.py: path.endswith("/" + site path)) with
  // its function, and of the function alone.
  function frameCodes(f) {
    if (!f) return null;
    if (!f.codes) {
      var path = f[0].replace(/\\/g, "/"), fn = leaf(f[2]), at = new Set([siteCode(path + "\0" + fn)]);
      for (var i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) at.add(siteCode(path.slice(i + 1) + "\0" + fn));
      f.codes = {at: at, fn: siteCode(fn)};
    }
    return f.codes;
  }
  // site_search.site_codes: "s" the sites' codes, "n" their functions' (entries with no words)
  function codes(text) { var out = []; for (var i = 0; i + 4 <= (text || "").length; i += 4) out.push(text.slice(i, i + 4)); return out; }
  function siteCodes(e) { if (!e.atCodes) e.atCodes = codes(e.s); return e.atCodes; }
  function functionCodes(e) { if (!e.fnCodes) e.fnCodes = codes(e.n); return e.fnCodes; }
  function inNamedFunction(f, e) { var c = frameCodes(f); return !!c && functionCodes(e).indexOf(c.fn) >= 0; }
  function sameFunction(f, e) { var c = frameCodes(f); return !!c && siteCodes(e).some(function (code) { return c.at.has(code); }); }
  function rust(e) { return kind(e) === "rust"; }
  function python(r) { return r.src === "traceback" || r.src === "raise" || !!r.f; }
  function exceptionMatch(e, r, fold) {
    if (!r.x) return 0;
    if (fold) {
      var x = foldCase(r.x);
      return x === foldCase(e.exception) ? 2 : (catchAs(e).some(function (c) { return foldCase(c) === x; }) ? 1 : 0);
    }
    return r.x === e.exception ? 2 : (catchAs(e).indexOf(r.x) >= 0 ? 1 : 0);
  }
  // match.agreement: how well the entry agrees with what the reading names, from -1 to 1
  function agreement(e, r) {
    if (!r) return 0;
    if (r.src === "log") return kind(e) === "log" && e.exception === r.x ? 1 : 0;
    if (kind(e) === "log") return -1;
    if (rust(e) && python(r)) return -1;
    var x = exceptionMatch(e, r);
    return x === 2 ? 1 : (x === 1 ? 0.5 : 0);
  }
  function umbrella(e) {
    var t = e.text.toLowerCase();
    return e.exception === "EngineDeadError" || t.indexOf("root cause") >= 0 || t.indexOf("see stack trace") >= 0 ||
      t.indexOf("check the logs for more details") >= 0 || t.indexOf("error raised in subprocess") === 0;
  }
  function inOrder(pieces, text) {
    var pos = 0;
    for (var i = 0; i < pieces.length; i++) {
      var j = text.indexOf(pieces[i], pos);
      if (j < 0) return false;
      pos = j + pieces[i].length;
    }
    return true;
  }
  function wordSet(r) { if (!r.words) r.words = new Set(r.m.match(/[\p{L}\p{N}_]+/gu) || []); return r.words; }
  // match.Matcher._score: a fit of shape s (the entry or one of its pieces) to reading r
  function scored(e, s, r, how, covered, gaps, foreignMsgs, fold) {
    var x = exceptionMatch(e, r, fold), site = r.f && sameFunction(r.f, e) ? 1 : 0, n = r.m.length, weighed = n;
    (gaps || []).forEach(function (g) { weighed -= Math.max(0, g[1] - g[0] - FIELD_WEIGHT); });
    var coverage = n ? covered / n : 1, support = weighed > 0 ? covered / weighed : 0, anchored;
    if (fold) {
      var low = new Set(foldCase(r.m).match(/[\p{L}\p{N}_]+/gu) || []);
      anchored = s.anchors.some(function (a) { return low.has(foldCase(a)); });
    } else {
      var have = wordSet(r);
      anchored = s.anchors.some(function (a) { return have.has(a); });
    }
    if (!s.fragments.length && ((!n && (!r.f || site) && (x || !r.x)) || (site && x))) { support = 1; anchored = true; }
    // the last frame is evidence: the whole template fits, the exception agrees, the frame is in its function
    var framed = how === "full" && !!site && !!x;
    if (foreignMsgs.has(r.m)) anchored = framed = false;  // a line the project does not raise: only weak
    var strong = (anchored && support >= MIN_SUPPORT) || framed;
    return {e: e, r: r, full: how === "full", coverage: coverage, support: support, site: site, strong: strong,
            key: [strong ? 1 : 0, how === "full" ? 1 : 0, Math.round(coverage * 1e6) / 1e6, x, site,
                  rust(e) ? (python(r) ? 0 : 1) : 2, KIND_RANK[kind(e)] === undefined ? 2 : KIND_RANK[kind(e)], -fieldCount(s)]};
  }
  function keyCmp(a, b) {
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i] ? 1 : -1;
    return 0;
  }
  // match.Matcher's lookups: shapes by the rarest word of their anchors, those with literal
  // text but no whole word, those with none, and by the code of each site's function
  var lookups = null;
  function lookup() {
    if (lookups) return lookups;
    var df = new Map(), all = [];
    data.entries.forEach(function (e) { shapes(e).forEach(function (s) { all.push([e, s]); s.anchors.forEach(function (a) { df.set(a, (df.get(a) || 0) + 1); }); }); });
    lookups = {buckets: new Map(), loose: [], blank: [], byFunction: new Map()};
    all.forEach(function (p) {
      var s = p[1];
      if (s.anchors.length) {
        var anchor = s.anchors.slice().sort(function (a, b) { return df.get(a) - df.get(b) || b.length - a.length || (a < b ? -1 : a > b ? 1 : 0); })[0];
        if (!lookups.buckets.has(anchor)) lookups.buckets.set(anchor, []);
        lookups.buckets.get(anchor).push(p);
      } else (s.fragments.length ? lookups.loose : lookups.blank).push(p);
      functionCodes(p[0]).forEach(function (code) {
        if (!lookups.byFunction.has(code)) lookups.byFunction.set(code, []);
        lookups.byFunction.get(code).push(p);
      });
    });
    return lookups;
  }
  function tried(r) {
    var L = lookup(), out = new Set();
    wordSet(r).forEach(function (w) { (L.buckets.get(w) || []).forEach(function (p) { out.add(p); }); });
    L.loose.forEach(function (p) { out.add(p); });
    if (r.f) (L.byFunction.get(frameCodes(r.f).fn) || []).forEach(function (p) { out.add(p); });
    if (!r.m) L.blank.forEach(function (p) { out.add(p); });
    return out;
  }
  // match.Matcher.full_matches
  // (fold: ignoring the case of ASCII letters, among the entries sharing the message's rarest words)
  function fullMatches(r, foreignMsgs, fold) {
    var out = [], pool = tried(r);
    if (fold) {
      pool = [];
      sharingWords(r.m, 200).forEach(function (e) {
        shapes(e).forEach(function (s) { if (/[\p{L}\p{N}]/u.test(s.fragments.join(""))) pool.push([e, s]); });
      });
    }
    pool.forEach(function (p) {
      var e = p[0], s = p[1], msg = r.m, frags = s.fragments;
      if (r.x && kind(e) === "log" && r.src !== "log") return;  // named an exception: raised, not logged
      var named = r.f && inNamedFunction(r.f, e), agrees = r.x === e.exception || catchAs(e).indexOf(r.x) >= 0;
      if (!frags.length) {
        // an opaque entry matches anything: only where the traceback points, for the exception it names
        if (msg && !named) return;
        if (r.x && !agrees && !sameFunction(r.f, e)) return;
        if (!msg && r.f && !sameFunction(r.f, e)) return;  // a message-less error raised elsewhere
      }
      if (frags.length && !/[\p{L}\p{N}]/u.test(frags.join("")) && !named && !(r.x && agrees)) return;
      if (frags.length && s.ends_literal) {
        var tail = droppedTail(frags[frags.length - 1]);
        if (tail && !msg.endsWith(tail)) msg = msg.replace(/\s+$/, "") + tail;
      }
      if (!frags.length && !fieldCount(s) && msg) return;
      var gaps = fold ? errcatGaps(frags.map(foldCase), s.starts_literal, s.ends_literal, foldCase(msg))
        : errcatGaps(frags, s.starts_literal, s.ends_literal, msg);
      if (gaps) out.push(scored(e, s, r, "full", frags.join("").length, gaps, foreignMsgs, fold));
    });
    return out;
  }
  // match._stops_where_it_goes_on: the message (its full stop taken off) ends a word inside a
  // literal fragment, with more words of it after (24: match.STOPPED_TAIL, in characters)
  function stopsWhereItGoesOn(frags, stopped) {
    var chars = Array.from(stopped), tail = chars.slice(-24).join("");
    if (chars.length < 24 || !/[\p{L}\p{N}]$/u.test(tail)) return false;
    for (var f = 0; f < frags.length; f++) {
      var i = frags[f].indexOf(tail);
      while (i >= 0) {
        var rest = frags[f].slice(i + tail.length), c = rest ? String.fromCodePoint(rest.codePointAt(0)) : "";
        if (c && !/[\p{L}\p{N}]/u.test(c) && c !== "." && rest.trim()) return true;
        i = frags[f].indexOf(tail, i + 1);
      }
    }
    return false;
  }
  // match.Matcher.prefix_matches: the message as the start of one the template makes
  function prefixMatches(r, foreignMsgs, fold) {
    var msg = r.m;
    ["...", "\u2026"].forEach(function (mark) { if (msg.endsWith(mark)) msg = msg.slice(0, -mark.length).replace(/\s+$/, ""); });
    if (msg.length < 4) return [];
    var cut = reading(msg, r.x, r.src, r.f, true, r.ln), out = [];
    // an older wording that ended its sentence where today's message goes on
    var stopped = msg.endsWith(".") && !msg.endsWith("..") && !r.t ? msg.slice(0, -1) : null;
    sharingWords(msg, 200).forEach(function (e) {
      if (r.x && kind(e) === "log" && r.src !== "log") return;
      shapes(e).forEach(function (s) {
        var frags = fold ? s.fragments.map(foldCase) : s.fragments, m0 = fold ? foldCase(msg) : msg;
        var st = stopped !== null && fold ? foldCase(stopped) : stopped;
        var covered = prefixCover(frags, s.starts_literal, s.ends_literal, m0);
        if (covered === null && st !== null && stopsWhereItGoesOn(frags, st)) {
          covered = prefixCover(frags, s.starts_literal, s.ends_literal, st);
        }
        if (covered === null) return;
        var inField = covered < 0;
        covered = inField ? -covered - 1 : covered;
        if (covered < Math.max(4, 0.4 * msg.length)) return;
        var m = scored(e, s, cut, "prefix", covered, null, foreignMsgs, fold);
        if (inField && !r.t) { m.strong = false; m.key[0] = 0; }  // as likely another message sharing this one's start
        out.push(m);
      });
    });
    return out;
  }
  // match._weak_score: likeness of wording, then within AGREE of it what the paste names
  function weakScore(w) {
    if (w.near) return w.similarity + AGREE * agreement(w.e, w.r);
    return (w.site ? 1 : 0) + (w.full ? Math.max(w.support, w.coverage) : w.coverage) + AGREE * agreement(w.e, w.r);
  }
  // match._repeats: the Rust frontend's check repeats the other entry's message (its literal text starts it)
  function repeats(r, o) {
    var rf = r.fragments, of = o.fragments, k = rf.length;
    if (!k || rust(o) || r.starts_literal !== o.starts_literal || of.length < k) return false;
    for (var i = 0; i < k - 1; i++) if (rf[i] !== of[i]) return false;
    return of[k - 1].startsWith(rf[k - 1]);
  }
  // match._repeated_first: the Python entry a Rust check repeats just before the check
  function repeatedFirst(weak) {
    var out = weak.slice();
    for (var i = 0; i < out.length; i++) {
      if (!rust(out[i].e)) continue;
      for (var j = i + 1; j < out.length; j++) {
        if (repeats(out[i].e, out[j].e)) { out.splice(i, 0, out.splice(j, 1)[0]); i++; break; }
      }
    }
    return out;
  }
  function byId(a, b) { return a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0; }
  // match.match: matches (root causes before umbrellas) and weak candidates, best first
  function answer(read, foreign, foreignMsgs) {
    var found = [];
    read.readings.forEach(function (r) {
      function any() { return full.some(function (m) { return m.strong; }); }
      var full = fullMatches(r, foreignMsgs);
      if (!any()) full = full.concat(prefixMatches(r, foreignMsgs));
      // another letter case (an issue's title), only when nothing matched as pasted
      if (!any()) full = full.concat(fullMatches(r, foreignMsgs, true));
      if (!any()) full = full.concat(prefixMatches(r, foreignMsgs, true));
      found = found.concat(full);
    });
    var best = new Map();
    found.forEach(function (m) { var b = best.get(m.e.id); if (!b || keyCmp(m.key, b.key) > 0) best.set(m.e.id, m); });
    var ranked = Array.from(best.values()).sort(function (a, b) { return keyCmp(b.key, a.key) || byId(a, b); });
    var strong = ranked.filter(function (m) { return m.strong; }), weak = ranked.filter(function (m) { return !m.strong; });
    // match._before_traceback: a line a traceback follows (logger.exception) says only that something failed
    var lines = read.cleaned.split("\n").map(function (l) { return l.trim(); }).filter(function (l) { return l; }), beforeTb = new Set();
    for (var k = 0; k + 1 < lines.length; k++) if (lines[k + 1] === TB) beforeTb.add(lines[k]);
    function umbrellaMatch(m) { return umbrella(m.e) || (kind(m.e) === "log" && beforeTb.has(m.r.m)); }
    var umbrellas = strong.filter(umbrellaMatch), causes = strong.filter(function (m) { return !umbrellaMatch(m); });
    if (umbrellas.length && (causes.length || foreign.length)) {
      causes.forEach(function (m) { m.role = "root cause"; });
      strong = causes.concat(umbrellas);
    }
    umbrellas.forEach(function (m) { m.role = "umbrella"; });
    var near = [];
    if (read.readings.length && !foreign.length && !causes.length) {
      // nothing but umbrellas (or nothing at all): the nearest wordings to the paste's other
      // lines may be the root cause, reworded since the release the paste came from
      var seen = new Set(), umbrellaLines = umbrellas.map(function (m) { return m.r.m; }), nearBest = new Map();
      var answered = new Set(umbrellas.map(function (m) { return m.e.id; }));
      read.readings.map(function (r, i) { return [r, i]; }).sort(function (a, b) {
        return ((a[0].src !== "line") - (b[0].src !== "line")) || (b[0].ln - a[0].ln) || (a[1] - b[1]);
      }).slice(0, 4).forEach(function (ri) {
        var r = ri[0];
        if (seen.has(r.m) || umbrellaLines.some(function (u) { return r.m.endsWith(u); })) return;
        seen.add(r.m);
        nearest(r.m).sort(function (a, b) { return b[1] - a[1] || (a[0].id < b[0].id ? -1 : 1); }).slice(0, 5).forEach(function (p) {
          if (answered.has(p[0].id)) return;
          var w = {near: true, e: p[0], similarity: p[1], r: null}, top = -2;
          read.readings.forEach(function (q) { if (q.m === r.m && agreement(p[0], q) > top) { top = agreement(p[0], q); w.r = q; } });
          var b = nearBest.get(w.e.id);
          if (!b || weakScore(w) > weakScore(b)) nearBest.set(w.e.id, w);
        });
      });
      near = Array.from(nearBest.values()).sort(function (a, b) { return b.similarity - a.similarity || byId(a, b); }).slice(0, 5);
    }
    var weakAll = repeatedFirst(weak.slice(0, LIMIT).concat(near).sort(function (a, b) { return weakScore(b) - weakScore(a) || byId(a, b); })).slice(0, LIMIT);
    return {strong: strong, weak: weakAll, causes: causes.length > 0};
  }
  // A word search for what is not a paste ("kv cache"): the entries whose words the query has.
  function wordScore(e, q, qw) {
    var s = 0;
    if (e.spaced === undefined) e.spaced = " " + e.tokens.join(" ") + " ";
    qw.forEach(function (w) {
      if (e.spaced.indexOf(w[0]) >= 0) s += 3 * w[2];
      else if (e.spaced.indexOf(w[1]) >= 0) s += w[2];
    });
    if (e.id.indexOf(q.trim()) === 0 && q.trim().length >= 4) s += 50;
    return s;
  }
  // A result's title: the entry's title, or where the title is cut at a field ("Total number
  // of attention heads (…"), its message template on one line, as errcat match prints it, around
  // the first word of the query it holds; the query's words marked. Text nodes only.
  var SHOWN_CHARS = 120;
  function shownTitle(a, e, qw) {
    var text = visible(e.title);
    if (/\u2026$/.test(e.title) && e.text) {
      text = visible(e.text.replace(/\s+/g, " "));
      var words = qw.map(function (w) { return w[0].trim(); }).filter(function (w) { return w.length > 2; });
      var lower = text.toLowerCase(), at = -1;
      words.forEach(function (w) { var i = lower.indexOf(w); if (i >= 0 && (at < 0 || i < at)) at = i; });
      if (text.length > SHOWN_CHARS) {
        var start = at > SHOWN_CHARS - 30 ? Math.max(0, at - 30) : 0, space = text.indexOf(" ", start);
        if (start && space >= 0 && space < at) start = space + 1;  // from a word's beginning
        text = (start ? "\u2026" : "") + text.slice(start, start + SHOWN_CHARS) + (start + SHOWN_CHARS < text.length ? "\u2026" : "");
      }
    }
    var marks = qw.map(function (w) { return w[0].trim(); }).filter(function (w) { return w.length > 2; }), low = text.toLowerCase(), i = 0;
    while (i < text.length) {
      var next = -1, len = 0;
      marks.forEach(function (w) { var j = low.indexOf(w, i); if (j >= 0 && (next < 0 || j < next || (j === next && w.length > len))) { next = j; len = w.length; } });
      if (next < 0) { a.appendChild(document.createTextNode(text.slice(i))); break; }
      if (next > i) a.appendChild(document.createTextNode(text.slice(i, next)));
      var m = document.createElement("mark"); m.textContent = text.slice(next, next + len); a.appendChild(m);
      i = next + len;
    }
  }
  function run() {
    var raw = box.value.slice(0, MAX_QUERY).trim();
    list.textContent = "";
    if (!raw) return;
    var read = readingsOf(raw), messages = read.readings.map(function (r) { return r.m; });
    var foreign = (data.foreign || []).filter(function (f) {
      return inOrder(f.match, read.cleaned) || messages.some(function (m) { return inOrder(f.match, m); });
    });
    var foreignMsgs = new Set(messages.filter(function (m) { return foreign.some(function (f) { return inOrder(f.match, m); }); }));
    foreign.forEach(function (f) {
      var li = document.createElement("li");
      li.className = "foreign";
      li.textContent = visible("Not raised by " + data.repo + ": raised by " + f.origin + " (" + f.name + "). " + f.explanation);
      // what to check, as errcat match prints it under the line
      if ((f.check || []).length) {
        f.check.forEach(function (c) { var item = document.createElement("div"); item.className = "check"; item.textContent = visible("Check: " + c); li.appendChild(item); });
      }
      list.appendChild(li);
    });
    var got = answer(read, foreign, foreignMsgs), shown = new Set(), rows = [];
    // As errcat match answers: the entries that match and nothing else; weak candidates (worded
    // alike, not a match) only when none does; and for words that are no paste ("kv cache"),
    // the entries that share them, labelled so, only when nothing matched.
    got.strong.forEach(function (m) {
      if (shown.has(m.e.id)) return;
      shown.add(m.e.id);
      rows.push([m.e, (m.full ? " \u00b7 matches" : " \u00b7 " + BEGINNING) + (m.role ? " \u00b7 " + m.role : "")]);
    });
    // (and under umbrellas alone, as errcat match offers the nearest wording: the root cause may be reworded)
    var umbrellasOnly = got.strong.length && got.strong.every(function (m) { return m.role === "umbrella"; });
    if (!rows.length || umbrellasOnly) got.weak.forEach(function (w) { if (!shown.has(w.e.id)) { shown.add(w.e.id); rows.push([w.e, " \u00b7 weak"]); } });
    var q = read.readings.length ? read.readings[read.readings.length - 1].m : raw, qw = queryWords(read.cleaned);
    if (!got.strong.length && !foreign.length) data.entries.map(function (e) { return [shown.has(e.id) ? 0 : wordScore(e, q, qw), e]; })
      .filter(function (p) { return p[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); })
      .slice(0, Math.max(0, LIMIT - rows.length)).forEach(function (p) { rows.push([p[1], " \u00b7 shares words"]); });
    var more = rows.length - LIMIT;
    rows.slice(0, LIMIT).forEach(function (row) {
      var e = row[0], li = document.createElement("li"), a = document.createElement("a");
      a.href = base + "errors/" + e.id + ".html";
      shownTitle(a, e, qw);
      var small = document.createElement("span");
      small.className = "badge";
      small.textContent = visible(e.exception + row[1]);
      li.appendChild(a); li.appendChild(document.createTextNode(" ")); li.appendChild(small);
      list.appendChild(li);
    });
    if (more > 0) {
      var rest = document.createElement("li"); rest.className = "muted";
      rest.textContent = more + " more entr" + (more === 1 ? "y matches" : "ies match") + ": paste more of the message to narrow them down.";
      list.appendChild(rest);
    }
    if (!rows.length && !foreign.length) {
      var li = document.createElement("li"); li.className = "muted"; li.textContent = "No entry found.";
      list.appendChild(li);
    }
  }
  box.addEventListener("input", run);
  // Keyboard: Down from the box to the first result, Up/Down between results, Escape back to
  // the box; Enter follows the focused link (a plain link: Tab reaches each one too).
  function links() { return Array.prototype.slice.call(list.querySelectorAll("a")); }
  box.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowDown" && links().length) { ev.preventDefault(); links()[0].focus(); }
  });
  list.addEventListener("keydown", function (ev) {
    var all = links(), i = all.indexOf(document.activeElement);
    if (i < 0) return;
    if (ev.key === "ArrowDown" && i + 1 < all.length) { ev.preventDefault(); all[i + 1].focus(); }
    else if (ev.key === "ArrowUp") { ev.preventDefault(); (i ? all[i - 1] : box).focus(); }
    else if (ev.key === "Escape") { ev.preventDefault(); box.focus(); }
  });
  var params = new URLSearchParams(window.location.search);
  if (params.get("q")) { box.value = params.get("q"); run(); }
})();
"""


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
    exc = r["exception"] or {}  # (none for a log or a response)
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
    parts.append(_section("message", "Message", f'<pre class="message">{esc(shown_message(r)) or "<span class=muted>(no message)</span>"}</pre>'))
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
    what = exception_word(r) if r["kind"] != RESPONSE else "error response"  # not its error type alone
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
           "", "## Message", "", md_code(shown_message(r)), ""]
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
        lines.append(f"| [{title}](errors/{r['id']}.md) | {md_inline(exception_word(r))} | "
                     f"{md_inline(r['location']['path'] + ':' + str(r['location']['line']))} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- writing


def render_site(dataset: Path, out: Path, fmt: str = "html", progress: Callable[[str], None] = lambda _: None,
                changelog: Path | None = None, data: str | None = None) -> int:
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
                yield "style.css", (STYLE + _FORMATTER_CSS + "\n").encode()
                yield "search.js", SEARCH_JS.encode()
                yield "index.js", INDEX_JS.encode()
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
    foreign errors (foreign_match.py) it answers "not raised by" with."""
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
