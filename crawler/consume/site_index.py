"""The site's front page: the search box first (the header's), the errors people report most
(the curated evidence), the entries counted by kind, by who must act (``meaning.action.actor``)
and by area, each count a way into the list; then a chart of each release's added and removed
entries, the changelog of the last sync, and every entry grouped by area and by exception.

Without JavaScript the list is the entries grouped by area (the module tree, ``vllm/v1/core``),
each group a ``<details>`` with its count, and the exceptions with their counts. index.js adds
the filters (explained / derived / unexplained; over a history, the release that raised an
entry: each row's ``data-v`` is the first and last covered release that did, by position in the
select's list, and a row whose history does not say stays listed), grouping by exception, kind or who must act and
sorting, by moving the same list items (no text is built from the dataset in JS but with
``textContent``); a count's link (``?by=k&open=raise#browse``) groups the list so and opens that group.
Everything from the dataset is escaped with ``site_html.esc``; the chart is an inline SVG drawn here,
at render time (no script, no style attribute: the page's CSP stays as strict as the pages').
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from crawler.model.kinds import KINDS, exception_word
from crawler.model.records import shown_source

#: Directories of the module tree an area keeps (vllm/v1/core/sched/x.py is in vllm/v1/core).
AREA_DEPTH = 3
#: Characters of a sync changelog the index shows (what ``errcat adopt`` allows a changelog).
MAX_CHANGELOG_CHARS = 65_536


def area(path: str) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:AREA_DEPTH]) or "(top level)"


def status(r: dict[str, Any]) -> str:
    """explained (text a person reviewed), drafted (a machine's draft no one reviewed yet: never
    filed as a person's), derived (only what errcat read from the code) or unexplained."""
    from crawler.consume.meaning_page import rows

    explained = r.get("explanation_status", "absent")
    if explained == "curated":
        return "explained"
    if explained == "draft":
        return "drafted"
    return "derived" if rows(r.get("meaning")) else "unexplained"


STATUS_LABEL = {
    "explained": "explained by a person",
    "drafted": "machine draft, not reviewed",
    "derived": "derived from the code",
    "unexplained": "unexplained",
}


def label(r: dict[str, Any], st: str) -> str:
    """The status a row of the index shows: a machine draft a reviewer accepted as is is explained,
    but not by a person."""
    if st == "explained" and (r.get("explanation") or {}).get("accepted_as_is"):
        return "explained by a machine draft a person accepted as is"
    return STATUS_LABEL[st]


#: What the front page calls each kind of entry.
KIND_LABEL = {name: spec.label for name, spec in KINDS.items()}
#: Who must act on an entry (``meaning.action.actor``), as the front page says it.
ACTOR_LABEL = {
    "setting": "you, in a setting: a flag, a config field or an environment variable",
    "request": "the client, in its request",
    "model": "the model: its files or its configuration",
    "environment": "the environment: hardware, drivers, installed packages",
    "caller": "the code that calls it",
    "internal": "nobody outside the project: likely a bug",
    "unknown": "not said by the code",
}
#: Areas the front page counts before "and N more" (the list below has them all).
TOP_AREAS = 12
#: Entries the "reported most" list shows.
TOP_REPORTED = 10


def actor(r: dict[str, Any]) -> str:
    return str(((r.get("meaning") or {}).get("action") or {}).get("actor") or "unknown")


def _version_key(v: str) -> tuple:
    from crawler.base.releases import release_key

    return release_key(v), v


def releases(records: list[dict[str, Any]]) -> tuple[list[str], Counter[str], Counter[str]]:
    """The releases the dataset's history covers, oldest first, with the entries each added and removed."""
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for r in records:
        h = r.get("history") or {}
        if h.get("first_seen") and h["first_seen"].get("version"):
            added[h["first_seen"]["version"]] += 1
        if h.get("retired") and h.get("removed_in") and h["removed_in"].get("version"):
            removed[h["removed_in"]["version"]] += 1
    return sorted(set(added) | set(removed), key=_version_key), added, removed


def chart_html(records: list[dict[str, Any]]) -> str:
    """An SVG bar chart of the entries each release added (up) and removed (down), with the
    numbers as a table too; empty when the dataset has no history over two releases or more."""
    from crawler.consume.site_html import esc

    versions, added, removed = releases(records)
    if len(versions) < 2:
        return ""
    first, shown = versions[0], versions[1:]
    top = max([added[v] for v in shown] + [1])
    bottom = max([removed[v] for v in shown] + [1])
    slot, bar, height, label_h = 72, 40, 160, 34
    scale = (height - 2 * 16) / (top + bottom)
    mid = 16 + top * scale
    width = slot * len(shown)
    items = []
    for i, v in enumerate(shown):
        x = i * slot + (slot - bar) / 2
        up, down = added[v] * scale, removed[v] * scale
        cx = i * slot + slot / 2
        items.append(
            f'<rect class="added" x="{x:.1f}" y="{mid - up:.1f}" width="{bar}" height="{up:.1f}" fill="#2e7d32"/>'
            f'<rect class="removed" x="{x:.1f}" y="{mid:.1f}" width="{bar}" height="{down:.1f}" fill="#c62828"/>'
            f'<text x="{cx:.1f}" y="{mid - up - 3:.1f}" text-anchor="middle" font-size="11">+{added[v]}</text>'
            f'<text x="{cx:.1f}" y="{mid + down + 12:.1f}" text-anchor="middle" font-size="11">\u2212{removed[v]}</text>'
            f'<text x="{cx:.1f}" y="{height + 20:.1f}" text-anchor="middle" font-size="12">{esc(v)}</text>'
        )
    summary = ", ".join(f"{v}: {added[v]} added, {removed[v]} removed" for v in shown)
    svg = (
        f'<svg class="chart" viewBox="0 0 {width} {height + label_h}" width="{width}" height="{height + label_h}" '
        f'role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="chart-title">Entries added and removed per release</title><desc id="chart-desc">{esc(summary)}</desc>'
        f'<line x1="0" x2="{width}" y1="{mid:.1f}" y2="{mid:.1f}" stroke="#888"/>{"".join(items)}</svg>'
    )
    table = (
        "<details><summary>The numbers</summary><table class=numbers><thead><tr><th scope=col>Release</th>"
        "<th scope=col>Added</th><th scope=col>Removed</th></tr></thead><tbody>"
        + "".join(f"<tr><td>{esc(v)}</td><td>{added[v]}</td><td>{removed[v]}</td></tr>" for v in versions)
        + "</tbody></table></details>"
    )
    return (
        f'<section id="releases"><h2>Entries added and removed per release</h2>'
        f"<p>{added[first]} entries in <code>{esc(first)}</code>, the first release covered; then each release:</p>"
        f'<div class="chart-box">{svg}</div>{table}</section>'
    )


def changelog_html(text: str | None) -> str:
    from crawler.consume.site_markdown import markdown_html

    if not text:
        return ""
    return f'<section id="changelog"><h2>Changes in the last sync</h2><div class="changelog">{markdown_html(text)}</div></section>'


#: Characters of a message template a list shows where the title is cut at a field (errcat match's 90).
SHOWN_CHARS = 90


def shown_title(r: dict[str, Any]) -> str:
    """The title, or where it is cut at a field ("Total number of attention heads (…"), the
    message template on one line as errcat match prints it."""
    title = str(r["title"])
    text = " ".join(str((r.get("message") or {}).get("text") or "").split())
    if not title.endswith("\u2026") or not text:
        return title
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "\u2026"


def _reported_html(records: list[dict[str, Any]]) -> str:
    """The entries with the most public reports (curated evidence), most first; none: no section."""
    from crawler.consume.site_html import esc, safe_url

    reported = sorted(
        (
            (len((r.get("explanation") or {}).get("evidence") or []), r)
            for r in records
            if (r.get("explanation") or {}).get("evidence") and not (r.get("history") or {}).get("retired")
        ),
        key=lambda nr: (-nr[0], nr[1]["title"], nr[1]["id"]),
    )[:TOP_REPORTED]
    if not reported:
        return ""
    items = []
    for n, r in reported:
        first = r["explanation"]["evidence"][0]
        number = first["url"].rstrip("/").rsplit("/", 1)[-1]
        items.append(
            f'<li><a href="errors/{esc(r["id"])}.html">{esc(shown_title(r))}</a> <span class="meta"><code>{esc(exception_word(r))}</code>'
            f' · reported {n} time{"s" if n != 1 else ""}, first in <a href="{esc(safe_url(first["url"]))}">#{esc(number)}</a></span></li>'
        )
    return (
        '<section id="most-reported"><h2>Errors people report most</h2>'
        "<p>From the reports reviewers linked to each entry (issues and discussions of the repository).</p>"
        f'<ol class="reported">{"".join(items)}</ol></section>'
    )


def _counts_html(title: str, key: str, counts: Counter[str], labels: dict[str, str], order: list[str], rest: int = 0) -> str:
    from urllib.parse import quote

    from crawler.consume.site_html import esc

    items = "".join(
        f'<li><a href="?by={key}&amp;open={esc(quote(name, safe="/"))}#browse">{esc(labels.get(name, name))}</a> '
        f'<span class="count">{counts[name]:,}</span></li>'
        for name in order
        if counts[name]
    )
    more = f'<li class="muted">and {rest:,} more areas below</li>' if rest else ""
    return f'<div class="facet" id="by-{key}"><h3>{esc(title)}</h3><ul>{items}{more}</ul></div>'


def overview_html(live: list[dict[str, Any]]) -> str:
    """The live entries counted by kind, by who must act and by area, each count a link into the list."""
    kinds = Counter(r["kind"] for r in live)
    actors = Counter(actor(r) for r in live)
    areas = Counter(area(r["location"]["path"]) for r in live)
    top = sorted(areas, key=lambda a: (-areas[a], a))
    kind_order = [k for k in KIND_LABEL if kinds[k]] + sorted(k for k in kinds if k not in KIND_LABEL)
    actor_order = sorted(actors, key=lambda a: (-actors[a], a))
    return (
        '<section id="overview"><h2>The catalogue at a glance</h2><div class="facets">'
        + _counts_html("By kind", "k", kinds, KIND_LABEL, kind_order)
        + _counts_html("Who must act", "w", actors, ACTOR_LABEL, actor_order)
        + _counts_html("By area", "a", areas, {}, top[:TOP_AREAS], max(0, len(top) - TOP_AREAS))
        + "</div></section>"
    )


def index_html(records: list[dict[str, Any]], manifest: dict[str, Any], repo: str, changelog: str | None = None) -> str:
    from crawler.consume.lineage import covered_releases, raised_range
    from crawler.consume.site_html import esc, layout

    live = [r for r in records if not (r.get("history") or {}).get("retired")]
    retired = len(records) - len(live)
    # the releases a history covers, for the filter by release: each entry's first and last of them
    covered = covered_releases([r.get("history") for r in records])
    spans = {r["id"]: raised_range(r.get("history"), covered) for r in records} if len(covered) > 1 else {}
    statuses = {r["id"]: status(r) for r in records}
    counts = Counter(statuses.values())
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(area(r["location"]["path"]), []).append(r)
    blocks = []
    for key in sorted(groups):
        rows = "".join(
            f'<li data-s="{statuses[r["id"]]}" data-x="{esc(exception_word(r))}" data-a="{esc(key)}"'
            f' data-k="{esc(r["kind"])}" data-w="{esc(actor(r))}"'
            + (' data-r="1"' if (r.get("history") or {}).get("retired") else "")
            + (f' data-v="{span[0]}-{span[1]}"' if (span := spans.get(r["id"])) else "")
            + ">"
            f'<a href="errors/{esc(r["id"])}.html">{esc(r["title"])}</a>'
            f'<span class="meta"><code>{esc(exception_word(r))}</code> · <code>{esc(r["location"]["path"])}:{r["location"]["line"]}</code>'
            f' · <span class="st-{statuses[r["id"]]}">{label(r, statuses[r["id"]])}</span>'
            + (' · <span class="retired">retired</span>' if (r.get("history") or {}).get("retired") else "")
            + "</span></li>"
            for r in sorted(groups[key], key=lambda r: (r["title"], r["id"]))
        )
        blocks.append(
            f'<details class="group" data-key="{esc(key)}"><summary><code>{esc(key)}</code> '
            f'<span class="count">{len(groups[key])}</span></summary><ul class="entries">{rows}</ul></details>'
        )
    exceptions = Counter(exception_word(r) for r in records)
    by_exc = "".join(
        f"<li><code>{esc(name)}</code> <span class=count>{n}</span></li>" for name, n in sorted(exceptions.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    commit, dated = shown_source(manifest)
    about = ", ".join(part for part in (manifest.get("ref") or "", dated.removeprefix(", ")) if part)
    filters = "".join(
        f'<label><input type="radio" name="show" value="{key}"{" checked" if key == "all" else ""}> {label} <span class="count">{n}</span></label>'
        for key, label, n in (("all", "all", len(records)), *((key, STATUS_LABEL[key], counts[key]) for key in STATUS_LABEL if key != "drafted" or counts[key]))
    )
    explained = sum(1 for r in live if statuses[r["id"]] == "explained")
    derived = sum(1 for r in live if statuses[r["id"]] == "derived")
    body = (
        f"<h1>{esc(repo)}: {len(live):,} errors</h1>"
        '<p class="lead">Paste an error message, a traceback or a log into the search box above: it finds the entry '
        "as <code>errcat match</code> does, on this page, with no network.</p>"
        f'<p id="counts">{len(live):,} entries: {explained:,} explained by a person, {derived:,} with what the code says '
        f"derived from it"
        + (f", {other:,} not explained yet" if (other := len(live) - explained - derived) else "")
        + ".</p>"
        + _reported_html(records)
        + overview_html(live)
        + f'<p id="analysed">Analysed at <code>{esc(commit)}</code>'
        + (f" ({esc(about)})" if about else "")
        + (f"; {retired} retired entries kept so their ids stay" if retired else "")
        + ".</p>"
        + chart_html(records)
        + changelog_html(changelog)
        + '<section id="browse"><h2>Every entry</h2>'
        f'<form id="controls" class="controls" hidden><fieldset><legend>Show</legend>{filters}</fieldset>'
        '<label>Group by <select id="group-by"><option value="a">area</option><option value="x">exception</option>'
        '<option value="k">kind</option><option value="w">who must act</option></select></label> '
        '<label>Sort groups <select id="sort-by"><option value="name">by name</option><option value="count">most entries first</option>'
        "</select></label>"
        + (
            '<label>Raised in <select id="release"><option value="">every release</option>'
            + "".join(f'<option value="{n}">{esc(v)}</option>' for n, v in enumerate(covered))
            + "</select></label>"
            if spans
            else ""
        )
        + "</form>"
        f'<div id="groups">{"".join(blocks)}</div></section>'
        f'<section id="by-exception"><h2>By exception</h2><ul class="exceptions">{by_exc}</ul></section>'
    )
    return layout(f"{repo} error catalogue", body, "", repo, scripts=("index.js",))
