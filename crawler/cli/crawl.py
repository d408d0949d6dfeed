"""``errcat crawl``, ``validate``, ``adopt`` and ``schema``: the commands that make and check a dataset."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from crawler.base.progress import REPORTER, Progress
from crawler.base.sink import echo
from crawler.base.teardown import hold, holding, leave_to_exit
from crawler.cli.options import DEFAULT_OUT, OUT_SHOWN, RegistryChoice, UpstreamOption

if TYPE_CHECKING:  # the store is imported where it is built: a crawl that never warms it never loads it
    from crawler.consume.match_store import Written


@click.command()
@click.option("--repo", metavar="URL_OR_PATH", help="An https:// git URL or a local git repository (default: the upstream's URL).")
@click.option("--ref", metavar="REF", help="Tag, branch or commit to crawl (default: the upstream's branch, or HEAD of a local repo).")
@click.option(
    "--pypi",
    metavar="NAME==VERSION",
    help="Crawl a released package from the package index instead of git: the upstream whose `pypi` it is, else the GitHub repository its metadata names.",
)
@click.option("--upstream", cls=UpstreamOption, metavar="NAME", help="A configured upstream (errcat.toml).")
@click.option("--name", metavar="OWNER/NAME", help="Override the repository identity used for output paths and permalinks.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only files matching GLOB (repeatable; default from the upstream).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out files matching GLOB (repeatable).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count).")
@click.option("--no-cache", is_flag=True, help="Parse every file again; do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="ERRCAT_CACHE_DIR", help="Cache directory (default: the user cache dir).")
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="errcat.toml to use (default: ./errcat.toml or [tool.errcat] in ./pyproject.toml)."
)
@click.option(
    "--curated",
    type=click.Path(path_type=Path, file_okay=False),
    help="Curated explanations root, holding <owner>/<name>/<id>.yaml (default: curated/ next to the config).",
)
@click.option(
    "--max-file-bytes",
    type=click.IntRange(min=1),
    show_default="2000000, or the upstream's max_file_bytes",
    help="Skip (and list in the manifest) files larger than this; they are never read.",
)
@click.option(
    "--max-file-sites",
    type=click.IntRange(min=1),
    show_default="1000, or the upstream's max_file_sites",
    help="Skip (and list in the manifest) files with more raise and assert sites than this.",
)
@click.option(
    "--max-output-bytes",
    type=click.IntRange(min=1),
    show_default="52428800 (50 MiB), or the upstream's max_output_bytes",
    help="Keep every file of the dataset at most this large: the source files whose entries would make one "
    "larger are skipped (and listed in the manifest), the largest share first.",
)
def crawl(
    repo, ref, pypi, upstream, name, include, exclude, out, jobs, no_cache, cache_dir, config, curated, max_file_bytes, max_file_sites, max_output_bytes
) -> None:
    """Crawl a pinned commit and write its catalogue under OUT/<owner>/<name>/.

    \b
    Examples:
      errcat crawl --pypi vllm==0.33.0
      errcat crawl --repo ../vllm --ref v0.33.0
      errcat crawl --repo https://github.com/vllm-project/vllm --ref main
      errcat crawl --repo . --name me/project --include 'src/**/*.py'
    """
    from crawler.base.errors import UsageError
    from crawler.crawl import CrawlOptions
    from crawler.crawl import crawl as run_crawl

    if pypi and (repo or ref):
        raise UsageError("--pypi reads a released package; it cannot be combined with --repo or --ref")
    options = CrawlOptions(
        repo=repo,
        ref=ref,
        pypi=pypi,
        upstream=upstream,
        name=name,
        include=list(include),
        exclude=list(exclude),
        out=out,
        jobs=jobs,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        config=config,
        curated=curated,
        max_blob_bytes=max_file_bytes,
        max_file_sites=max_file_sites,
        max_output_bytes=max_output_bytes,
    )
    # The crawl runs without the cycle collector (see ``crawl.crawl``), and so does the match
    # store's build: turned on again in between, its first pass (the store's import) would walk
    # every object the crawl left alive, and each full one the build's allocations start would
    # walk them again (the search index handed over: ~100,000 lists and dicts for vLLM, for no
    # cycle among them), a tenth of a second.
    enabled = gc.isenabled()
    gc.disable()
    leave_to_exit()  # one dataset, then the process ends: its objects are not freed one by one
    try:
        result = run_crawl(options, progress=REPORTER)
        hold(result)  # (its search index: left to the process's exit, base.teardown)
        if not no_cache and not result.unchanged:
            _warm_match_store(result.target, cache_dir, REPORTER, result.search)
    finally:
        if enabled:
            if holding():  # (what the crawl left alive is never garbage: no collection walks it)
                gc.freeze()
            gc.enable()
    c = result.manifest.counts
    REPORTER(f"{'unchanged' if result.unchanged else 'wrote'} {result.target}")
    echo(f"files {c.files}, parsed {c.parsed}, skipped {c.skipped}, sites {c.sites}, entries {c.entries}, {result.seconds:.1f}s")


@click.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT)
@click.option(
    "--engine",
    type=RegistryChoice("crawler.publish.validate", "ENGINES"),
    default="fast",
    show_default=True,
    help="fast: jsonschema-rs; reference: the Python jsonschema library (same verdicts, ~20x slower).",
)
def validate(directory: Path, engine: str) -> None:
    """Validate every dataset under DIRECTORY against the JSON Schemas (default: output/).

    Prints every invalid file with the JSON pointer of each error, then each dataset's verdict;
    exit 1 if any.
    """
    from crawler.base.errors import UsageError
    from crawler.model.records import OLDER_SCHEMA_VERSIONS, SCHEMA_VERSION
    from crawler.publish.dataset import schema_of
    from crawler.publish.dataset_dirs import find_datasets
    from crawler.publish.validate import validate_dataset

    if not directory.is_dir():
        raise UsageError(f"no such directory: {directory}: name the directory a crawl wrote (errcat validate DIR), or make one with `errcat crawl`")
    datasets = list(find_datasets(directory))
    if not datasets:
        raise UsageError(
            f"no dataset (manifest.json) under {directory}: name the directory a crawl wrote (errcat validate DIR), or make one with `errcat crawl`"
        )
    bad = 0
    for dataset in datasets:
        problems = validate_dataset(dataset, engine, progress=REPORTER)
        for problem in problems:
            echo(f"{dataset}/{problem}")
        if problems.more:
            echo(f"{dataset}: {problems.more:,} more problem(s), not shown")
        if problems.stopped is not None:
            echo(f"{dataset}: errors.jsonl.gz not checked past line {problems.stopped:,} ({len(problems):,} problems shown)")
        bad += problems.total
        state = f"{problems.total:,} problem(s)" if problems.total else "valid"
        echo(f"{dataset}: {state}")
        older = schema_of(dataset)
        if problems.total and older in OLDER_SCHEMA_VERSIONS:
            echo(
                f"{dataset}: made at schema {older}, which every command still reads; `errcat sync` or `errcat crawl` writes it anew at schema {SCHEMA_VERSION}"
            )
    if bad:
        sys.exit(1)


@click.command()
@click.argument("artifact", type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=OUT_SHOWN, help="Output root.")
@click.option("--upstream", cls=UpstreamOption, metavar="NAME", envvar="ERRCAT_UPSTREAM", help="A configured upstream (errcat.toml).")
@click.option("--name", metavar="OWNER/NAME", envvar="ERRCAT_NAME", help="The dataset to expect (default: the upstream's).")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="errcat.toml to use.")
@click.option("--changelog", type=click.Path(path_type=Path, dir_okay=False), help="Write the artifact's changelog here, once checked.")
@click.option(
    "--curated", type=click.Path(path_type=Path, file_okay=False), help="Where the artifact's drafts go, once checked (default: curated/ next to errcat.toml)."
)
def adopt(artifact: Path, out: Path, upstream: str | None, name: str | None, config: Path | None, changelog: Path | None, curated: Path | None) -> None:
    """Check a catalogue made by another job and write it under OUT/<owner>/<name>/.

    ARTIFACT holds output/<owner>/<name>/ as a crawl writes it and changelog.md, as the sync
    workflow's read-only job uploads them. Nothing in it is trusted: anything but that layout
    (a symlink, a FIFO, another file or dataset), a document that fails the schemas, files that
    do not hash to the manifest's digest, anything render, match or show would refuse (a record
    of another repository, a link off it, a manifest whose counts or commit its records and
    documents contradict), or a changelog that is not plain text is refused (exit 1) and
    nothing is written. Drafts the sync wrote through an endpoint (curated/<owner>/<name>/<id>.yaml)
    are taken into CURATED when each is a draft the dataset's record carries, and no file is there.
    Prints commit=<40 hex>, also to $GITHUB_OUTPUT when set, with drafts=<how many> when it took some.
    """
    from crawler.catalogue.explanations import default_root
    from crawler.source.config import identify, load_config
    from crawler.versions.adopt import adopt as run_adopt
    from crawler.versions.sync import check_output_commit

    settings = load_config(config)
    up = identify(None, upstream, name, settings)
    root = curated if curated is not None else default_root(settings.path)
    result = run_adopt(artifact, out, up.owner, up.repo, changelog, REPORTER, url=up.url, curated=root)
    commit = check_output_commit(result.commit)
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as f:
            # drafts= only when some were taken: the pull request's labels read it as a flag
            f.write(f"commit={commit}\n" + (f"drafts={len(result.drafts)}\n" if result.drafts else ""))
    for path in result.drafts:
        REPORTER(f"took the draft {path}")
    REPORTER(f"wrote {result.target}")
    echo(f"commit={commit}")


@click.command()
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("schema"), show_default=True)
def schema(out: Path) -> None:
    """Write the JSON Schemas (generated from the models) into OUT."""
    from crawler.model.schemas import write_schemas

    for path in write_schemas(out):
        echo(str(path))


def _warm_match_store(target: Path, cache_dir: Path | None, progress: Progress, written: Written | None = None) -> None:
    """Build the store ``errcat match`` reads (match_store.py) now, so the first match is quick;
    the dataset is written, so a failure here only means the first match builds it. ``written``:
    the search index the crawl wrote (``CrawlResult.search``)."""
    import sqlite3

    from crawler.consume.match_store import build, store_path

    try:
        build(target, store_path(target, cache_dir), written)
    except (OSError, sqlite3.Error) as exc:
        progress(f"the match index was not built ({exc}); `errcat match` builds it on first use")
