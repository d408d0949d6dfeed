"""What several commands share: the default output root and the repository options."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_OUT = Path("output")

def source_options(func: F) -> F:
    """The repository options of ``errcat crawl``, for commands that crawl refs themselves."""
    options = [
        click.option("--repo", metavar="URL_OR_PATH", envvar="ERRCAT_REPO", help="An https:// git URL or a local git repository (default: the upstream's URL)."),
        click.option("--upstream", metavar="NAME", envvar="ERRCAT_UPSTREAM", help="A configured upstream (errcat.toml); default: vllm."),
        click.option("--name", metavar="OWNER/NAME", envvar="ERRCAT_NAME", help="Override the repository identity used for output paths and permalinks."),
        click.option("--include", multiple=True, metavar="GLOB", help="Only files matching GLOB (repeatable; default from the upstream)."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out files matching GLOB (repeatable)."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count)."),
        click.option("--no-cache", is_flag=True, help="Parse every file again; do not read or write the result cache."),
        click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="ERRCAT_CACHE_DIR", help="Cache directory (default: the user cache dir)."),
        click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="errcat.toml to use."),
    ]
    for option in reversed(options):
        func = option(func)
    return func
