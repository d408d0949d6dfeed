"""``errcat curate``: check, relink, review, retire and draft curated explanations."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from crawler.base.errors import UsageError
from crawler.base.progress import REPORTER
from crawler.base.sink import echo
from crawler.cli.options import DEFAULT_OUT, OUT_SHOWN

_curated_option = click.option(
    "--curated",
    type=click.Path(path_type=Path, file_okay=False),
    help="Curated explanations root, holding <owner>/<name>/<id>.yaml (default: curated/ next to the config).",
)
_data_option = click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=OUT_SHOWN,
    help="Dataset directory or output root.",
)


def _root(curated: Path | None) -> Path:
    if curated is not None:
        return curated
    from crawler.catalogue.explanations import default_root
    from crawler.source.config import load_config

    return default_root(load_config(None).path)


@click.group()
def curate() -> None:
    """Curated explanations: curated/<owner>/<name>/<id>.yaml, merged into records by the crawl.

    \b
    Typical round after upstream moved:
      errcat crawl --repo ../vllm --ref v0.34.0
      errcat curate check                 # orphans, stale files, coverage
      errcat curate move OLD NEW          # relink a reworded entry's text
      errcat curate review ID             # after re-reading a stale one

    Every ID may be a unique prefix of at least 4 digits, as errcat show takes.
    """


@curate.command("check")
@click.argument("output_dir", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT)
@_curated_option
@click.option("--strict", is_flag=True, help="Also fail on stale files and dangling related ids.")
@click.option("--all-packages", is_flag=True, help="List coverage for every top-level package, not only covered ones.")
@click.option(
    "--hot",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many reported entries without a reviewed text to list, most reported first (evidence.yaml).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    help="The dataset directory or output root, as the other commands take it (instead of OUTPUT_DIR).",
)
def check_cmd(output_dir: Path, curated: Path | None, strict: bool, all_packages: bool, hot: int, as_json: bool, data: Path | None) -> None:
    """Check curated files against the dataset(s) under OUTPUT_DIR (default: output/; or --data).

    Reports every invalid file, orphan (with the entry it should probably move to), stale file
    and the coverage, then the entries users reported (evidence.yaml) that have no reviewed text
    yet, most reported first: the next ones to write. A dataset that cannot be read is skipped with a
    line saying why. Exit 1 on orphans, invalid files or a skipped dataset (with
    --strict, on stale files and evidence for ids no longer in the dataset too).
    """
    import json

    from crawler.curate.check import check, entries_under, format_report

    if data is not None:
        if output_dir != DEFAULT_OUT():
            raise UsageError(f"give the datasets once: OUTPUT_DIR {output_dir} or --data {data}")
        output_dir = data
    root = _root(curated)
    skipped: list[str] = []

    def skip(line: str) -> None:  # a dataset that cannot be read is a failure of the check too
        skipped.append(line)
        REPORTER(line)

    reports = []
    datasets = entries_under(output_dir, skip)
    failed = bool(skipped)
    for ds in datasets:
        report = check(ds, root)
        failed |= report.failed(strict)
        if as_json:
            reports.append(report.as_json())
        else:
            echo(f"{ds.path} against {report.curated}:")
            for line in format_report(report, all_packages, hot):
                echo(f"  {line}")
    if as_json:
        echo(json.dumps(reports, indent=2), kind="json")
    if failed:
        sys.exit(1)


@curate.command("move")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@_curated_option
@_data_option
def move_cmd(old: str, new: str, curated: Path | None, data: Path) -> None:
    """Relink OLD's curated file to entry NEW (e.g. after upstream reworded the message).

    The text is kept as written; the review metadata records NEW's template and guards.
    """
    from crawler.curate.edit import move
    from crawler.curate.id_prefix import resolve_id

    root = _root(curated)
    src, dst, was = move(root, data, resolve_id(data, root, old), resolve_id(data, root, new))
    echo(f"moved {src} -> {dst}")
    echo(f"  was written for: {was.template!r}", err=True)


@curate.command("review")
@click.argument("entry_id", metavar="ID")
@click.option(
    "--read-and-accept-as-is",
    "accept_as_is",
    is_flag=True,
    help="Review a draft whose text is still the drafter's: you read it against the code and accept it unedited (recorded in the review as accepted_as_is).",
)
@click.option(
    "--still-holds-for-earlier",
    "keep_earlier",
    is_flag=True,
    help="A reviewed text re-read for new code that still holds for the code it was reviewed for: keep that code in the review (review.also), so a crawl of the earlier release shows it curated too.",
)
@_curated_option
@_data_option
def review_cmd(entry_id: str, accept_as_is: bool, keep_earlier: bool, curated: Path | None, data: Path) -> None:
    """Mark ID's file reviewed at the dataset's commit (records today's template and guards).

    A draft whose text is still exactly what `errcat curate draft` (or its model) wrote is
    refused: rewrite it first, or say with --read-and-accept-as-is that you read it and accept it.
    After a release changed a reviewed entry's guards, --still-holds-for-earlier keeps the code
    it was reviewed for as well, when the text is right for both releases.
    """
    from crawler.curate.edit import mark
    from crawler.curate.id_prefix import resolve_id

    root = _root(curated)
    echo(f"reviewed {mark(root, data, resolve_id(data, root, entry_id), 'reviewed', accept_as_is=accept_as_is, keep_earlier=keep_earlier)}")


@curate.command("retire")
@click.argument("entry_id", metavar="ID")
@click.option("--note", help="Why (e.g. 'removed upstream in v0.34.0').")
@_curated_option
@_data_option
def retire_cmd(entry_id: str, note: str | None, curated: Path | None, data: Path) -> None:
    """Mark ID's file retired: the error is gone upstream; the text stays on disk."""
    from crawler.curate.edit import mark
    from crawler.curate.id_prefix import resolve_id

    root = _root(curated)
    echo(f"retired {mark(root, data, resolve_id(data, root, entry_id), 'retired', note)}")


@curate.command("draft")
@click.argument("entry_id", metavar="[ID]", required=False)
@click.option("--all", "every", is_flag=True, help="Draft every entry without a curated file (with --llm), most reported first; resumable.")
@_curated_option
@_data_option
@click.option("--llm", metavar="URL", help="An OpenAI-compatible server (e.g. a vLLM server) to write the prose: POST URL/v1/chat/completions.")
@click.option("--model", help="Model name for --llm (default: the first of URL/v1/models).")
@click.option("--limit", type=click.IntRange(min=1), help="With --all: draft at most N entries this run.")
@click.option("--concurrency", type=click.IntRange(min=1, max=64), default=4, show_default=True, help="With --all: requests at a time.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=120.0,
    show_default=True,
    help="Seconds each attempt of a request may take, all of it (connecting, headers, body).",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0, max=10),
    default=3,
    show_default=True,
    help="Retries of a request that failed in a way that may pass (429, 5xx, timeout, malformed answer).",
)
@click.option("--backoff", type=click.FloatRange(min=0), default=2.0, show_default=True, help="Seconds before the first retry; doubled each time.")
@click.option(
    "--api-key-env",
    default="ERRCAT_LLM_API_KEY",
    show_default=True,
    metavar="NAME",
    help="Environment variable holding the endpoint's API key (sent as a bearer token, never printed).",
)
@click.option("--repo", envvar="ERRCAT_REPO", help="The repository the dataset was crawled from, for the names check (default: the dataset's repository URL).")
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="errcat.toml naming the upstreams' draft_link_hosts (default: ./errcat.toml or [tool.errcat] in ./pyproject.toml).",
)
@click.option(
    "--changed",
    "changed_report",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="REPORT",
    help="With --all: only the entries this diff report (errcat sync --report) lists as added or changed.",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help="With --all: start no request after this many seconds of the run (each attempt's timeout is cut to what is left).",
)
@click.option(
    "--token-budget",
    type=click.IntRange(min=1),
    metavar="TOKENS",
    help="With --all: start no request once the answers' tokens (usage.total_tokens, as the server counts) reach this.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), metavar="TOKENS", help="Cap each answer (max_tokens in the request).")
@click.option(
    "--summary",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --all: write a Markdown section listing the drafts written (a pull request's), when there are any.",
)
def draft_cmd(
    entry_id: str | None,
    every: bool,
    curated: Path | None,
    data: Path,
    llm: str | None,
    model: str | None,
    limit: int | None,
    concurrency: int,
    timeout: float,
    retries: int,
    backoff: float,
    api_key_env: str,
    repo: str | None,
    config: Path | None,
    changed_report: Path | None,
    time_budget: float | None,
    token_budget: int | None,
    max_tokens: int | None,
    summary: Path | None,
) -> None:
    """Write a draft explanation for ID from the machine-derived facts (or --llm), or with
    --all for every entry without a curated file; never over a curated file.

    \b
    A machine-written draft is validated before it is written: the curated schema, then every
    --flag, setting, environment variable and function it names must exist in the crawled
    commit; it must not quote the API key (in any encoding), link anywhere but the repository's
    own pages and the upstream's draft_link_hosts (errcat.toml), nor be a file the crawl would
    refuse. It is written as `status: draft` with the model's name; records and pages say
    "machine-written, not reviewed" until `errcat curate review ID`.

    \b
    With --all the run is bounded: --limit entries, --time-budget seconds, --token-budget tokens
    (and --max-tokens an answer); what a budget leaves unasked is "unstarted", no failure, and
    the next run picks it up. Exit 1 when an entry was rejected or failed.
    """
    from crawler.base.errors import UsageError
    from crawler.catalogue.explanations import default_root
    from crawler.curate.llm import Endpoint, LLMFailure
    from crawler.source.config import load_config

    if every == (entry_id is not None):
        raise UsageError("give one ID or --all")
    if every and not llm:
        raise UsageError("--all needs --llm URL (a draft from the facts alone is written one ID at a time)")
    if not every:
        given = [
            name
            for name, value in (
                ("--limit", limit),
                ("--changed", changed_report),
                ("--time-budget", time_budget),
                ("--token-budget", token_budget),
                ("--summary", summary),
            )
            if value is not None
        ]
        if given:
            raise UsageError(f"{given[0]} goes with --all")
    endpoint = None
    if llm:
        from crawler.curate.llm import Budget

        budget = Budget(time_budget, token_budget) if every else None
        try:
            endpoint = Endpoint.from_url(llm, key_env=api_key_env, timeout=timeout, retries=retries, backoff=backoff, max_tokens=max_tokens, budget=budget)
        except LLMFailure as failure:
            raise UsageError(f"--llm {llm}: {failure.reason}") from None
    settings = load_config(config)
    root = curated if curated is not None else default_root(settings.path)
    link_hosts = {up.slug.lower(): up.draft_link_hosts for up in settings.upstreams.values()}
    if entry_id is not None:
        from crawler.curate.draft import draft
        from crawler.curate.id_prefix import resolve_id

        echo(f"drafted {draft(root, data, resolve_id(data, root, entry_id), endpoint, model, repo, link_hosts=link_hosts)}")
        return
    from crawler.base.cachedir import default_cache_dir
    from crawler.curate.draft_all import Outcome, changed_ids, draft_all, drafts_summary

    assert endpoint is not None
    only = changed_ids(changed_report) if changed_report is not None else None
    counts: dict[str, int] = {}
    outcomes: list[Outcome] = []

    def report(outcome: Outcome) -> None:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        outcomes.append(outcome)
        if outcome.status == "drafted":
            echo(f"drafted  {outcome.path}")
        else:
            echo(f"{outcome.status:<8} {outcome.id}: {outcome.reason}", err=True)

    try:
        draft_all(
            root,
            data,
            endpoint,
            model=model,
            limit=limit,
            concurrency=concurrency,
            repo=repo,
            report=report,
            link_hosts=link_hosts,
            only=only,
            cache_dir=default_cache_dir(),
        )
    except LLMFailure as failure:
        raise UsageError(f"--llm {endpoint.base}: {failure.reason}") from None
    echo(
        f"drafts: {counts.get('drafted', 0)} written, {counts.get('rejected', 0)} rejected, {counts.get('failed', 0)} failed"
        + "".join(f", {counts[k]} {k}" for k in ("skipped", "unstarted") if counts.get(k)),
        err=True,
    )
    if summary is not None and counts.get("drafted"):
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(drafts_summary(outcomes, root), encoding="utf-8")
    if counts.get("rejected") or counts.get("failed"):
        sys.exit(1)
