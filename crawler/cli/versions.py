"""``errcat diff``, ``errcat history`` and ``errcat sync``: options in, ``versions`` called.

Registered in ``main.py``. Conventions as there: results on stdout, progress on stderr, usage and
source errors exit 2 with one line; ``diff --fail-on`` and ``sync --exit-code`` exit 1.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from crawler.base.errors import UsageError, invalid_data
from crawler.base.progress import REPORTER
from crawler.base.sink import KINDS, echo, output_lines
from crawler.cli.options import DEFAULT_OUT, OUT_SHOWN, RegistryChoice, source_options

if TYPE_CHECKING:
    from crawler.model.diff import ChangeKind
    from crawler.versions.sides import SourceOptions

P = ParamSpec("P")
R = TypeVar("R")


def _source(kw: dict[str, Any]) -> SourceOptions:
    from crawler.versions.sides import SourceOptions

    return SourceOptions(
        repo=kw.pop("repo"),
        upstream=kw.pop("upstream"),
        name=kw.pop("name"),
        include=list(kw.pop("include")),
        exclude=list(kw.pop("exclude")),
        jobs=kw.pop("jobs"),
        use_cache=not kw.pop("no_cache"),
        cache_dir=kw.pop("cache_dir"),
        config=kw.pop("config"),
    )


def _invalid_data_is_one_line(command: Callable[P, R]) -> Callable[P, R]:
    """Data that fails a model anywhere in the command (a dataset, a report side, a history
    lifetime) ends as errcat's one line and exit 1, never pydantic's traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kw: P.kwargs) -> R:
        from pydantic import ValidationError

        try:
            return command(*args, **kw)
        except ValidationError as exc:
            raise invalid_data(exc) from None

    return run


def _kinds(values: tuple[str, ...]) -> set[ChangeKind]:
    from crawler.model.diff import ChangeKind

    slugs = set(ChangeKind)
    chosen: set[ChangeKind] = set()
    for value in values:
        for item in filter(None, (v.strip() for v in value.split(","))):
            if item == "any":
                chosen |= slugs
            elif item in slugs:
                chosen.add(ChangeKind(item))
            else:
                raise UsageError(f"--fail-on {item!r}: expected any or one of {', '.join(sorted(slugs))}")
    return chosen


def _write(text: str, output: Path | None, kind: str = "lines") -> None:
    """Printed or written, crawled text goes through the same sink (a changelog may be echoed
    into a CI log later)."""
    from crawler.base.files import write_file

    if output is None:
        echo(text, nl=False, kind=kind)
    else:
        write_file(output, KINDS[kind](text).encode("utf-8"))


@click.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@source_options
@click.option(
    "--format",
    "fmt",
    type=RegistryChoice("crawler.versions.formats", "FORMATS"),
    default="oneline",
    show_default=True,
    help="oneline: one change a line; markdown: a changelog; github: workflow annotations; json: the diff schema.",
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="KINDS",
    help="Exit 1 when a change of these kinds is found: comma-separated, or 'any' "
    "(added, removed, moved, reworded, exception-changed, sites-added, sites-removed).",
)
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report here instead of stdout.")
@click.option(
    "--pypi", is_flag=True, help="OLD and NEW are releases on the package index (NAME==VERSION, or VERSION of the upstream's package): no git needed."
)
@_invalid_data_is_one_line
def diff(old: str, new: str, fmt: str, fail_on: tuple[str, ...], output: Path | None, pypi: bool, **kw: Any) -> None:
    """What changed between two catalogues: OLD and NEW are refs, releases or output directories.

    A ref (tag, branch, commit) is crawled with the result cache into a scratch directory,
    using the repository options as ``errcat crawl`` does; with --pypi, OLD and NEW are
    released packages, crawled as ``errcat crawl --pypi`` does (each wheel is downloaded once);
    a directory is read as written.

    \b
    Examples:
      errcat diff v0.32.0 v0.33.0 --repo ../vllm
      errcat diff vllm==0.32.0 vllm==0.33.0 --pypi
      errcat diff old-output/ output/ --format markdown
      errcat diff v1 v2 --repo . --format github --fail-on removed,reworded
    """
    from crawler.versions.formats import format_report
    from crawler.versions.sides import check_sides, diff_datasets, open_side, release_specs

    kinds = _kinds(fail_on)
    source = _source(kw)
    specs = release_specs([old, new], source) if pypi else [None, None]
    if not pypi:
        check_sides([old, new], source)
    with source.scratch() as tmp:
        report = diff_datasets(open_side(old, source, tmp, REPORTER, specs[0]), open_side(new, source, tmp, REPORTER, specs[1]))
    _write(format_report(report, fmt), output, {"json": "json", "github": "commands"}.get(fmt, "lines"))
    c = report.counts
    REPORTER(f"{report.old.label} -> {report.new.label}: " + ", ".join(f"{name.replace('_', ' ')} {getattr(c, name)}" for name in type(c).model_fields))
    hit = sorted(report.kinds() & kinds)
    if hit:
        REPORTER(f"failing on: {', '.join(hit)}")
        sys.exit(1)


def _newest_per_minor(releases: list[str], wanted: bool) -> list[str]:
    """``releases`` (tags or versions), or with ``wanted`` the newest of each minor series."""
    if not wanted:
        return releases
    from crawler.base.releases import newest_per_minor

    return newest_per_minor(releases)


@click.command()
@click.argument("refs", nargs=-1, metavar="[REF]...")
@click.option("--range", "span", metavar="OLD..NEW", help="Every release tag from OLD to NEW (a local repository).")
@click.option(
    "--newest-per-minor",
    "newest_per_minor",
    is_flag=True,
    help="With --range: only the newest release of each minor series (0.6.6.post1 of 0.6.x), in PEP 440 order: a backfill of every minor.",
)
@click.option("--tag-pattern", default=None, metavar="REGEX", help="Which tags are releases (default: v1.2.3 style, no pre-releases).")
@click.option(
    "--per-release",
    "per_release",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="Write each REF's own dataset under DIR/REF/ instead of folding them (a backfill's matrix job).",
)
@click.option("--fold", is_flag=True, help="The arguments are datasets (as --per-release writes them), not refs: fold them, oldest release first.")
@click.option(
    "--catalogue",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="ROOT",
    help="With --fold: an output root whose catalogue of this repository (moved past the releases by syncs) "
    "stays the newest state, the releases' history folded behind it; refused when it is older than the newest release.",
)
@click.option("--changelog", type=click.Path(path_type=Path, dir_okay=False), help="Write a markdown summary (a pull request body) here.")
@click.option(
    "--plan",
    type=click.IntRange(min=1),
    metavar="N",
    help="Crawl nothing: print the REFs (or --range) as a JSON list of at most N groups, oldest first, "
    "each a space-separated string (a workflow's matrix); also to $GITHUB_OUTPUT as groups=.",
)
@click.option(
    "--pypi",
    is_flag=True,
    help="The REFs are releases on the package index (NAME==VERSION, or VERSION of the upstream's "
    "package), each crawled from its wheel; --range OLD..NEW is every final release between "
    "as the index lists them. No git needed.",
)
@source_options
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Output root.")
@_invalid_data_is_one_line
def history(
    refs: tuple[str, ...],
    span: str | None,
    tag_pattern: str | None,
    per_release: Path | None,
    fold: bool,
    catalogue: Path | None,
    changelog: Path | None,
    plan: int | None,
    pypi: bool,
    newest_per_minor: bool,
    out: Path,
    **kw: Any,
) -> None:
    """Crawl REFs oldest first and write the newest catalogue with every entry's history.

    Each record gets first_seen and last_seen (version and commit); entries gone by the last
    REF are kept as retired records ("removed in v0.32.0"), so their ids are never reused.

    A backfill over many machines: --per-release DIR crawls each REF into its own dataset,
    then --fold DIR... folds such datasets (from any number of jobs) into the history.

    \b
    Examples:
      errcat history --repo ../vllm v0.31.0 v0.32.0 v0.33.0
      errcat history --repo ../vllm --range v0.31.0..v0.33.0
      errcat history --repo ../vllm --per-release releases/ v0.31.0 v0.32.0
      errcat history --fold releases/ more-releases/ --out output
      errcat history --fold releases/ --catalogue output --out backfill/output
      errcat history --pypi 0.4.3 0.5.5 0.6.6.post1 --out output
      errcat history --pypi --range 0.32.0..0.33.0 --per-release releases/
      errcat history --pypi --range 0.1.0..0.33.0 --newest-per-minor --plan 10
    """
    from crawler.base.jsonio import dumps_line as dumps
    from crawler.versions.history import summary
    from crawler.versions.sides import DEFAULT_TAG_PATTERN
    from crawler.versions.sync import fold_datasets
    from crawler.versions.sync import history as run_history
    from crawler.versions.sync import per_release as run_per_release
    from crawler.versions.tags import tags_in_range

    source = _source(kw)
    if newest_per_minor and not span:
        raise UsageError("--newest-per-minor picks from --range OLD..NEW: give the range")
    if pypi and fold:
        raise UsageError("--fold reads datasets: --pypi names releases to crawl")
    if fold:
        if span or per_release is not None or plan is not None:
            raise UsageError("--fold reads datasets: give neither --range nor --per-release")
        if not refs:
            raise UsageError("--fold needs at least one dataset directory")
        missing = [r for r in refs if not Path(r).is_dir()]
        if missing:
            raise UsageError(f"no such directory: {missing[0]}")
        target, state, chosen = fold_datasets([Path(r) for r in refs], out, progress=REPORTER, catalogue=catalogue)
    else:
        if catalogue is not None:
            raise UsageError("--catalogue goes with --fold")
        chosen = list(refs)
        if span and chosen:
            raise UsageError("give either REFs or --range, not both")
        specs: list[str] = []
        if pypi:
            from crawler.source.config import identify, load_config
            from crawler.versions.sides import release_specs
            from crawler.versions.tags import releases_in_range

            if tag_pattern is not None:
                raise UsageError("--tag-pattern picks git tags: --pypi releases are the index's")
            if span:
                upstream = identify(None, source.upstream, source.name, load_config(source.config))
                if upstream.pypi is None:
                    raise UsageError(f"--range with --pypi: upstream {upstream.name!r} names no package (errcat.toml: pypi = ...)")
                chosen = _newest_per_minor(releases_in_range(upstream.pypi, span), newest_per_minor)
            specs = [s for s in release_specs(chosen, source, directories=False) if s is not None]
        elif span:
            chosen = _newest_per_minor(tags_in_range(source, span, tag_pattern or DEFAULT_TAG_PATTERN), newest_per_minor)
        if plan is not None:
            from crawler.versions.tags import plan_groups

            groups = dumps(plan_groups(chosen, plan, pypi)).decode("utf-8").strip()
            github_output = os.environ.get("GITHUB_OUTPUT")
            if github_output:
                with open(github_output, "a", encoding="utf-8") as f:
                    f.write(output_lines([("groups", groups)]))
            echo(groups)
            return
        if per_release is not None:
            if changelog is not None:
                raise UsageError("--per-release folds nothing: --changelog goes with the fold")
            for written in run_per_release(source, specs or chosen, per_release, progress=REPORTER, pypi=pypi):
                REPORTER(f"wrote {written}")
            echo(f"versions {len(chosen)} ({', '.join(chosen)}) written under {per_release}")
            return
        if pypi:
            from crawler.versions.tags import refuse_releases_out_of_order

            refuse_releases_out_of_order(specs)
        elif not span:
            from crawler.versions.tags import refuse_newest_first

            refuse_newest_first(source, chosen, tag_pattern or DEFAULT_TAG_PATTERN)
        target, state = run_history(source, specs or chosen, out, progress=REPORTER, pypi=pypi)
    REPORTER(f"wrote {target}")
    if changelog is not None:
        from crawler.publish.dataset import load_manifest

        _write(summary(state, load_manifest(target), chosen), changelog)
    echo(
        f"versions {len(chosen)} ({', '.join(chosen)}), entries {len(state) - state.retired}, retired {state.retired}, "
        f"first_seen {state.first_seen}/{len(state)}"
    )


@click.command()
@source_options
@click.option("--ref", metavar="REF", help="Branch, tag or commit to follow (default: the upstream's branch, or HEAD of a local repo).")
@click.option("--latest-tag", is_flag=True, help="Follow the newest release tag instead of a branch.")
@click.option("--tag-pattern", default=None, metavar="REGEX", help="Which tags are releases (default: v1.2.3 style, no pre-releases).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Output root.")
@click.option("--changelog", type=click.Path(path_type=Path, dir_okay=False), help="Write the markdown changelog (the pull request body) here.")
@click.option("--report", "report_path", type=click.Path(path_type=Path, dir_okay=False), help="Write the JSON diff report here.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when the catalogue changed (like git diff --exit-code).")
@click.option("--catch-up", is_flag=True, help="Write the new commit's catalogue even when no entry, explanation or errcat version changed.")
@_invalid_data_is_one_line
def sync(
    ref: str | None,
    latest_tag: bool,
    tag_pattern: str | None,
    out: Path,
    changelog: Path | None,
    report_path: Path | None,
    exit_code: bool,
    catch_up: bool,
    **kw: Any,
) -> None:
    """Bring the catalogue up to the upstream: resolve, crawl, diff, write, say if it changed.

    Resolves the upstream's branch head (or, with --latest-tag, its newest release tag) to a
    commit; when that is the commit already in OUT's manifest (crawled by this errcat), nothing
    is crawled. Otherwise it crawls it, carries history forward (new entries first seen now,
    vanished ones retired), diffs against the previous catalogue and writes both. A commit that
    changes no entry, explanation or errcat version writes nothing and says changed=false: the
    manifest names the newer commit with the next change (or now, with --catch-up).

    Prints changed=true|false; when $GITHUB_OUTPUT is set, appends changed=..., commit=... and
    dataset=OWNER/NAME (its directory under OUT) to it for the workflow's later steps.
    """
    from crawler.base.jsonio import dumps
    from crawler.versions.sides import DEFAULT_TAG_PATTERN
    from crawler.versions.sync import check_output_commit
    from crawler.versions.sync import sync as run_sync

    if ref and latest_tag:
        raise UsageError("give either --ref or --latest-tag, not both")
    source = _source(kw)
    result = run_sync(source, out, ref=ref, latest_tag=latest_tag, tag_pattern=tag_pattern or DEFAULT_TAG_PATTERN, progress=REPORTER, catch_up=catch_up)
    for note in result.notes:
        REPORTER(f"note: {note}")
    if changelog is not None:
        _write(result.changelog, changelog)
    if report_path is not None and result.report is not None:
        _write(dumps(result.report).decode("utf-8"), report_path, "json")
    flag = "true" if result.changed else "false"
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as f:
            # dataset: which directory under OUT is this upstream's (output/ may hold others')
            dataset = "/".join(result.target.relative_to(out).parts)
            f.write(output_lines([("changed", flag), ("commit", check_output_commit(result.commit)), ("dataset", dataset)]))
    summary = ""
    if result.report is not None:
        summary = f" ({len(result.report.changes)} change(s) {result.report.old.label} -> {result.report.new.label})"
    echo(f"changed={flag} commit={result.commit}{summary}")
    if exit_code and result.changed:
        sys.exit(1)


@click.command()
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="errcat.toml to use.")
@click.option("--json", "as_json", is_flag=True, help="One JSON list (a workflow's matrix); also to $GITHUB_OUTPUT as upstreams=.")
def upstreams(config: Path | None, as_json: bool) -> None:
    """The configured upstreams (errcat.toml), one name a line: what the sync workflow runs a job for.

    Names become artifact, cache and branch names in the workflows: each must be letters, digits,
    '.', '_' or '-'.
    """
    from crawler.base.jsonio import dumps_line
    from crawler.source.config import load_config

    names = sorted(load_config(config).upstreams)
    bad = [n for n in names if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", n)]
    if bad:
        raise UsageError(f"upstream name {bad[0]!r} cannot name a workflow job: use letters, digits, '.', '_' or '-'")
    if not as_json:
        echo("".join(f"{n}\n" for n in names), nl=False)
        return
    listing = dumps_line(names).decode("utf-8").strip()
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as f:
            f.write(output_lines([("upstreams", listing)]))
    echo(listing)
