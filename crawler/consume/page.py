"""One record laid out as a catalogue page, as plain text for the terminal (``errcat show``)."""

from __future__ import annotations

from crawler.consume.kinds import kind_text
from crawler.consume.meaning_page import NOTE, TITLE, meaning_text
from crawler.consume.meaning_page import rows as meaning_rows
from crawler.consume.surface_rows import surface_rows
from crawler.model.records import NoPermalinks, Record


def _section(title: str, body: list[str]) -> list[str]:
    return ["", title, "-" * len(title), *body] if body else []


def _bullets(items: list[str]) -> list[str]:
    return [f"  - {item}" for item in items]


def _code(code: str, start: int | None = None) -> list[str]:
    # Snippets end lines at newlines only (as Python does): a form feed or U+2028 is not a line.
    lines = code.split("\n")
    if lines[-1] == "":
        lines.pop()
    if start is None:
        return [f"    {line}" for line in lines]
    width = len(str(start + len(lines)))
    return [f"  {start + i:>{width}} | {line}" for i, line in enumerate(lines)]


def render_text(record: Record) -> str:
    out = [record.title, "=" * min(len(record.title), 80), ""]
    exc = record.exception
    ancestry = f" (a {exc.builtin_ancestor})" if exc.builtin_ancestor and exc.builtin_ancestor != exc.name else ""
    out.append(f"Exception:  {exc.qualname}{ancestry}")
    out.append(f"Kind:       {kind_text(record.kind, record.native.model_dump() if record.native else None)}")
    out.append(f"Message:    {record.message.text}")
    for label, text in surface_rows({"log": record.log and record.log.model_dump(), "response": record.response and record.response.model_dump(),
                                     "message": {"alternatives": record.message.alternatives}}):
        out.append(f"{label + ':':<11} {text}")
    out.append(f"Id:         {record.id}")
    out.append(f"Explained:  {record.explanation_status}")
    loc = record.location
    primary = record.sites[0]
    links = record.provenance.permalinks
    link = loc.permalink or f"(no permalink: {links.reason if isinstance(links, NoPermalinks) else 'none recorded'})"
    out += _section("Source", [f"{loc.path}:{loc.line} in {loc.qualname}", link, "", *_code(primary.snippet.code, primary.snippet.start_line)])
    facts = primary.facts
    fact_lines = [f"  if {g}" for g in facts.guards] + [f"  in {loop}" for loop in facts.loops]
    if facts.handler:
        fact_lines.append(f"  in {facts.handler}")
    if facts.cause:
        fact_lines.append(f"  from {facts.cause}")
    fact_lines += [f"  @{d}" for d in facts.decorators]
    out += _section("How the code gets there (machine-derived)", fact_lines)
    derived = meaning_rows(record.meaning.model_dump(mode="json"))
    out += _section(TITLE, [f"  {label}: {text}" for label, text in derived] + ["  " + NOTE] if derived else [])
    ex = record.explanation
    out += _section("What it means", [ex.what_it_means] if ex.what_it_means else [])
    when = ex.when_it_happens
    out += _section("When it happens", ([f"  {when.trigger}"] if when.trigger else []) + _bullets(when.common_situations))
    out += _section("Solutions", _bullets(ex.solutions))
    if ex.example_fix and (ex.example_fix.before or ex.example_fix.after):
        out += _section("Example fix", ["  Before:", *_code(ex.example_fix.before), "  After:", *_code(ex.example_fix.after)])
    patterns: list[str] = []
    for p in ex.defensive_patterns:
        patterns += [f"  {p.strategy}", *_code(p.code)]
    out += _section("Defensive patterns", patterns)
    out += _section("Prevention", _bullets(ex.prevention))
    out += meaning_text(record.meaning)
    out += _section("Related errors", [f"  {r.id}  {r.title}  ({r.reason})" for r in record.related])
    if len(record.sites) > 1:
        out += _section(f"All {len(record.sites)} sites", [f"  {s.path}:{s.line} in {s.qualname}" for s in record.sites])
    prov = record.provenance
    commit = prov.upstream_commit or prov.commit
    out += ["", f"Last changed in {prov.repo} at {commit} ({prov.commit_date})."]
    return "\n".join(out) + "\n"
