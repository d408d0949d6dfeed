"""What several commands share: the default output root, the repository options and choices
read from a stage's registry."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


#: The default of every --out and --data: ``output/`` of the errcat home (``base.home``), read
#: when a command runs (a callable default), so that it is the same wherever the command runs.
def DEFAULT_OUT() -> Path:
    from crawler.base.home import default_out

    return default_out()


#: What --help shows as the default of --out and --data.
OUT_SHOWN = "output/ of the errcat home: $ERRCAT_HOME, else the errcat project here or above, else errcat's checkout"


class RegistryChoice(click.Choice[str]):
    """The names of a stage's registry (``module.NAME``, a dict or a sequence), in its order.

    Read when click first needs them (parsing or help of the command that uses it), so the stage
    is imported only when that command runs: ``errcat --help`` and every other command stay as
    quick to start as before.
    """

    def __init__(self, module: str, name: str) -> None:
        self._where = (module, name)
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        module, name = self._where
        return tuple(getattr(importlib.import_module(module), name))

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        pass  # click's constructor assigns its argument; the registry is the one source


#: Where the caches live, for every command that reads or fills one (the crawl's extraction
#: cache, the match store): the same directory by flag or environment for all of them.
cache_dir_option = click.option(
    "--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="ERRCAT_CACHE_DIR", help="Cache directory (default: the user cache dir)."
)


class UpstreamOption(click.Option):
    """``--upstream``, whose help names the default the config found here gives (its ``default``),
    read when the help is shown: a fixed "vllm" was wrong under any errcat.toml naming another."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from crawler.base.errors import ConfigError
        from crawler.base.sink import visible
        from crawler.source.config import load_config

        try:
            config = load_config(None)
        except ConfigError:
            default = "the `default` of errcat.toml (which does not load here), else vllm"
        else:
            default = (
                f"{config.default}, the `default` of {visible(str(config.path))}" if config.path is not None else f"{config.default} (no errcat.toml here)"
            )
        self.help = f"A configured upstream (errcat.toml); default: {default}; with --config FILE, that file's `default`."
        return super().get_help_record(ctx)


def source_options(func: F) -> F:
    """The repository options of ``errcat crawl``, for commands that crawl refs themselves."""
    options = [
        click.option(
            "--repo", metavar="URL_OR_PATH", envvar="ERRCAT_REPO", help="An https:// git URL or a local git repository (default: the upstream's URL)."
        ),
        click.option("--upstream", cls=UpstreamOption, metavar="NAME", envvar="ERRCAT_UPSTREAM", help="A configured upstream (errcat.toml)."),
        click.option("--name", metavar="OWNER/NAME", envvar="ERRCAT_NAME", help="Override the repository identity used for output paths and permalinks."),
        click.option("--include", multiple=True, metavar="GLOB", help="Only files matching GLOB (repeatable; default from the upstream)."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out files matching GLOB (repeatable)."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count)."),
        click.option("--no-cache", is_flag=True, help="Parse every file again; do not read or write the result cache."),
        cache_dir_option,
        click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="errcat.toml to use."),
    ]
    for option in reversed(options):
        func = option(func)
    return func
