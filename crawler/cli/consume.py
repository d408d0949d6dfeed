"""Consumer commands: ``errcat match`` (which entry is this error?) and ``errcat render`` (pages).

Both work from a written dataset alone; neither needs the crawled repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections import deque
from pathlib import Path
from typing import Any, TextIO

import click

from crawler.base.errors import UsageError
from crawler.base.progress import REPORTER
from crawler.base.sink import echo
from crawler.cli.options import DEFAULT_OUT, OUT_SHOWN, cache_dir_option
from crawler.cli.pager import COLOR_CHOICES
from crawler.model.kinds import LOG


def _matchers(data: Path, cache_dir: Path | None = None, fresh: bool = False, report=REPORTER):
    """A matcher per dataset under ``data``, each reading its store (match_store.py): importing
    no models and loading only the entries a query touches. A dataset that cannot be read is
    skipped with a line saying why, when there are others to answer from (``each_readable``)."""
    from crawler.consume.match_store import open_matcher
    from crawler.publish.dataset_dirs import each_readable

    return each_readable(data, lambda d: open_matcher(d, cache_dir, fresh), report)


#: How alike (wording, or share covered) an entry near a line of a paste holding only umbrellas
#: must be to be offered as what the umbrella points at.
ALIKE = 0.5
#: How alike a weak candidate must be for its page to be offered (a message reworded since).
NEARLY = 0.8


def _likeness(w) -> float:
    """A weak candidate's likeness: wording (a near entry) or the share its text covers."""
    return w.similarity if hasattr(w, "similarity") else max(w.support, w.coverage)


def _one_line(text: str, width: int = 100) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command()
@click.argument("message", required=False)
@click.option("--data", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Dataset directory or output root.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Entries to show (ties with the last are shown too).")
@click.option(
    "--version",
    "release",
    metavar="RELEASE",
    help="The release you run (0.6.3): of a history catalogue's entries, those it raised come first. "
    "Default: the one release the paste names (a server's startup line, a path like vllm-0.6.3).",
)
@cache_dir_option
def match(message: str | None, data: Path, as_json: bool, limit: int, release: str | None, cache_dir: Path | None) -> None:
    """Find the entry for an error message or a whole traceback.

    MESSAGE is the error as you saw it: a message, "SomeError: message", a traceback (chained
    ones too), a pydantic ValidationError, or a server's JSON error body; or a file holding it
    (a saved log). Without MESSAGE (or with "-") it is read from stdin. Only the last 256 KiB of
    a longer input are read (the error is at the end of a log). Exit 1 when no entry matches;
    the nearest are offered.

    \b
    Examples:
      errcat match "Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: ..."
      python serve.py 2>&1 | errcat match --data output/vllm-project/vllm
      errcat match server.log
      errcat match --version 0.6.3 "ValueError: The model's max seq len (4096) is larger than ..."
    """
    from crawler.consume.lineage import VERSION
    from crawler.consume.match import MAX_INPUT
    from crawler.consume.match import match as run_match
    from crawler.consume.match_store import DamagedStore

    if release is not None and not VERSION.fullmatch(release):
        raise UsageError(f"--version: not a release such as 0.6.3 or v0.8.5: {_one_line(release, 40)!r}")
    if message is None or message == "-":
        if sys.stdin is None or (hasattr(sys.stdin, "isatty") and sys.stdin.isatty()):
            raise UsageError("give a MESSAGE or pipe the error into stdin")
        message = _tail(sys.stdin, MAX_INPUT + 1)
    elif _names_a_file(message):  # a saved log: its text is the paste, not its name
        try:
            with open(message, encoding="utf-8", errors="replace", newline="") as f:
                message = _tail(f, MAX_INPUT + 1)
        except OSError as e:
            raise UsageError(f"cannot read {message}: {e.strerror or e}") from None
    if len(message) > MAX_INPUT:
        REPORTER(f"input longer than {MAX_INPUT // 1024} KiB: matching its last {MAX_INPUT // 1024} KiB")
        message = message[-MAX_INPUT:]
    if not message.strip():
        raise UsageError(
            "the message is empty: give it as an argument (errcat match 'ValueError: ...'), a log file, or pipe a log in (python serve.py 2>&1 | errcat match)"
        )
    matchers = _matchers(data, cache_dir)  # the store the crawl built in the same cache directory
    try:
        result = run_match(message, matchers, limit, release)
    except DamagedStore as e:  # a damaged cache is an optimisation lost: built again from the dataset
        REPORTER(f"{e}: building it again")
        matchers = _matchers(data, cache_dir, fresh=True, report=lambda _: None)  # (said once above)
        result = run_match(message, matchers, limit, release)
    if as_json:
        echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False), kind="json")
    else:
        _print_text(result)
        # where to read more: the first match's page, or a weak candidate's worded almost alike
        # (when nothing matches, or only umbrellas do: the root cause is what to read about)
        near = next((w for w in result.weak[:1] if _likeness(w) >= NEARLY), None)
        umbrellas = bool(result.matches) and all(m.role == "umbrella" for m in result.matches)
        first, whose = (result.matches[0], "its") if result.matches and not (umbrellas and near) else (near, "the nearest one's")
        if first is not None:
            where = "" if data == DEFAULT_OUT() else f" --data {shlex.quote(str(data))}"
            echo(f"{whose} page: errcat show {first.entry.id}{where}")
            today = (getattr(first, "lineage", None) or {}).get("today")
            if today and today != first.entry.id:
                weakly = "" if first in result.matches else ", if the weak candidate is your error"
                echo(f"what raises it today{weakly}: errcat show {today}{where}")
    if not result.matches:
        sys.exit(1)


def _names_a_file(message: str) -> bool:
    """The argument is a path to a file (one line, no longer than a path gets), not an error."""
    if "\n" in message or "\x00" in message or len(message) > 4096:
        return False
    try:
        return Path(message).is_file()
    except OSError:
        return False


def _tail(stream: TextIO, limit: int) -> str:
    """The last ``limit`` characters of a stream, holding little more than that in memory."""
    chunks: deque[str] = deque()
    size = 0
    while chunk := stream.read(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        while size - len(chunks[0]) >= limit:
            size -= len(chunks.popleft())
    return "".join(chunks)[-limit:]


def _print_weak(weak: list, title: str) -> None:
    from crawler.consume.match import agreement

    if weak:
        echo(title)
        for w in weak:
            score = f"{w.similarity:.0%} alike" if hasattr(w, "similarity") else f"covers {w.support:.0%}"
            # what ranks it beside its likeness: the exception (or log level) the paste names
            if agreement(w.entry, w.reading) > 0:
                score += ", same level" if w.entry.kind == LOG else ", same exception"
            echo(f"  {w.entry.id}  {score}  {w.entry.exception}: {_one_line(w.entry.text, 90)}")
            if (w.lineage or {}).get("succeeded_by"):
                _print_lineage(w.lineage, "      ")  # a weak candidate's successors: as weak as it is


def _print_lineage(lineage: dict[str, Any] | None, indent: str = "   ") -> None:
    """Which releases raised a matched entry, its moves, and what succeeds it today (``indent``:
    a weak candidate's under its line)."""
    if not lineage:
        return
    raised = lineage.get("raised_in")
    removed = (lineage.get("releases") or {}).get("removed_in")
    if lineage.get("retired"):
        echo(
            f"{indent}retired: "
            + (f"raised in {_one_line(raised, 60)}" if raised else "no longer raised")
            + (f", removed in {_one_line(removed, 40)}" if removed else "")
        )
    elif raised:
        echo(f"{indent}raised {_one_line(raised, 60)}")
    for move in lineage.get("moved") or []:
        at = f" in {_one_line(move['version'], 40)}" if move.get("version") else ""
        echo(f"{indent}moved: {_one_line(move['from_path'], 80)} -> {_one_line(move['to_path'], 80)}{at}")
    succeeded = lineage.get("succeeded_by") or []
    for n, s in enumerate(succeeded, start=1):
        last = n == len(succeeded)
        state = "retired since" if s.get("retired") else "raised today" if last else "live"
        echo(
            f"{indent}{'succeeded by' if n == 1 else 'then by'} {s['id']} ({s['how']}; {state}"
            + (f", {_one_line(s['raised_in'], 40)}" if s.get("raised_in") and not s.get("retired") else "")
            + f"): {_one_line(s['exception'], 60)}: {_one_line(s['template'], 80)}"
        )


def _print_text(result) -> None:
    from crawler.consume.match import field_groups

    if result.readings:
        r = result.matches[0].reading if result.matches else result.readings[0]
        echo(f"message: {_one_line(r.message)}" + (f"  ({r.exception})" if r.exception else ""))
    if result.version_from == "paste":
        echo(f"release: {_one_line(result.version, 40)} (named by the paste; --version says otherwise)")
    for hit in result.foreign:
        e = hit.error
        echo(f"not raised by {hit.project}: raised by {e.origin} ({e.name}). {e.explanation}")
        for item in e.check:
            echo(f"  check: {item}")
    if not result.matches:
        echo("no entry matches." if not result.foreign else "no entry of the catalogue matches.")
        _print_weak(result.weak, "weak candidates (not a match):")
        return
    prefix = result.matches[0].how == "prefix"
    if prefix:
        echo("no full match; entries this message is the beginning of:")
    for i, m in enumerate(result.matches, start=1):
        e = m.entry
        flags = [f"covers {m.coverage:.0%}"]
        if m.exception_match == 2:
            flags.append("same exception")
        elif m.exception_match == 1:
            flags.append(f"a {m.reading.exception}")
        if m.site_match:
            flags.append("raised here per traceback")
        if m.tied:
            flags.append("tied")
        if m.role:
            flags.append(m.role)
        if m.live_in:
            flags.append(f"{'raised' if m.live_in > 0 else 'not raised'} by {_one_line(result.version or '', 40)}")
        condition = getattr(e, "condition", None)  # an assert with no message: what it checks
        said = f" (no message): assert {_one_line(condition, 80)}" if condition is not None and not e.text else f": {_one_line(e.text, 90)}"
        echo(f"{i}. {e.id}  {e.exception}{said}")
        echo(f"   {e.sites[0].path}:{e.sites[0].line} in {e.sites[0].qualname}  [{', '.join(flags)}]")
        for exprs, value in field_groups(m):
            if value is not None:
                # a field's expression as one line; adjacent fields share the one value they print
                name = "".join("{" + re.sub(r"\s*\n\s*", " ", expr) + "}" for expr in exprs)
                together = "  (these fields together)" if len(exprs) > 1 else ""
                echo(f"   {_one_line(name, 80)} = {_one_line(value, 80)}{together}")
        _print_lineage(m.lineage)
    if all(m.role == "umbrella" for m in result.matches):
        # only umbrellas: what they point at is elsewhere in the log, maybe reworded since; of
        # the entries nearest the paste's other lines, those worded at least half alike
        near = [w for w in result.weak if _likeness(w) >= ALIKE]
        if near:
            _print_weak(near, "it points at another error, its root cause; nearest entries to the paste's other lines:")
        else:
            echo("it points at another error, its root cause, printed elsewhere in the log: paste the lines around it.")


@click.command()
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=OUT_SHOWN,
    help="Dataset directory (the one holding manifest.json), or an output root holding exactly one.",
)
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("site"), show_default=True, help="Where to write the site.")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default="html", show_default=True)
@click.option(
    "--changelog",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The Markdown changelog of the last sync (errcat sync --changelog), shown on the index.",
)
@click.option(
    "--data-url",
    metavar="URL",
    help="Where readers of the site reach the dataset (https://..., or a path relative to the site); default: the dataset's path relative to OUT.",
)
def render(data: Path, out: Path, fmt: str, changelog: Path | None, data_url: str | None) -> None:
    """Write the catalogue as a static site: one page per entry, an index, offline search.

    The HTML site works from file:// with no network: open OUT/index.html. Each page links to
    its record in the dataset (not copied into the site): serve the dataset where --data-url
    says, or beside the site as the two directories lie.
    """
    from crawler.consume.site import data_url as data_link
    from crawler.consume.site import render_site
    from crawler.publish.dataset_dirs import datasets_under

    datasets = datasets_under(data)
    if len(datasets) != 1:
        raise UsageError(f"{'no dataset' if not datasets else 'more than one dataset'} under {data}; pass --data <dataset directory>")
    base = data_link(datasets[0].resolve(), Path(os.path.abspath(out)).resolve(), data_url)
    count = render_site(datasets[0], out, fmt, progress=REPORTER, changelog=changelog, data=base)
    # the one thing a site alone does not hold: a static host must serve the dataset there too
    where = base if base.lower().startswith("https://") else f"{base} (relative to the site)"
    echo(f"{count} pages in {out}; their JSON links go to the dataset at {where}")


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--data", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Dataset directory or output root.")
@click.option("--json", "as_json", is_flag=True, help="Print the record's JSON instead of the page.")
@click.option(
    "--color",
    "color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour the page: auto colours on a terminal unless NO_COLOR is set.",
)
@click.option("--no-pager", is_flag=True, help="Never page; by default a page on a terminal goes to $ERRCAT_PAGER, $PAGER or less.")
def show(entry_id: str, data: Path, as_json: bool, color: str, no_pager: bool) -> None:
    """Show one entry laid out like its catalogue page.

    On a terminal the page is coloured and paged, as git show does; piped, it is plain text."""
    from crawler.cli.pager import color_wanted
    from crawler.cli.pager import show as show_page
    from crawler.consume.page import STYLES, layout
    from crawler.publish.dataset import find_record

    path, record = find_record(data, entry_id)
    if as_json:
        from crawler.base.jsonio import dumps_record
        from crawler.publish.migrate import is_previous

        text = path.read_text(encoding="utf-8")
        if is_previous({"schema_version": json.loads(text).get("schema_version")}):  # as read: the record of this schema
            text = dumps_record(record.model_dump(mode="json")).decode()
        echo(text, nl=False, kind="json")
        return
    use_color = color_wanted(color, sys.stdout)
    show_page(layout(record.model_dump(mode="json"), _replacements(path, record), _digests(path)), STYLES if use_color else None, paging=not no_pager)


def _digests(path: Path) -> frozenset[str]:
    """The commits of the record's dataset that are a wheel's files digest (``page_model.file_digests``)."""
    from crawler.consume.page_model import file_digests

    try:
        manifest = json.loads((path.parent.parent / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return file_digests(manifest if isinstance(manifest, dict) else None)


def _replacements(path: Path, record: Any) -> dict[str, Any]:
    """The records a record's history names as its successor or predecessors, from its own
    dataset, for its page to say how the error changed; one that cannot be read is left out
    (the page then says only that it was reworded or re-typed)."""
    from crawler.base.errors import DataError, UsageError
    from crawler.consume.lineage import chain
    from crawler.publish.dataset import load_record

    history = record.history
    ids = [*history.replaces, *([history.replaced_by] if history.replaced_by else [])] if history is not None else []
    others: dict[str, Any] = {}

    def read(eid: str) -> dict[str, Any] | None:  # EntryId: 16 hex digits, a safe file name
        if eid not in others:
            try:
                others[eid] = load_record(path.parent / f"{eid}.json").model_dump(mode="json")
            except (DataError, UsageError, OSError):
                return None
        return others[eid]

    for eid in ids:
        read(eid)
    chain(record.model_dump(mode="json"), read)  # its successors down to today's, for its page to name and explain
    return others
