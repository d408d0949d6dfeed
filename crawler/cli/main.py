"""The ``errcat`` command: parses options and calls the library; no logic of its own.

Exit codes: 0 ok, 1 findings or invalid data, 2 usage or source errors (one clear line, no
traceback). Progress goes to stderr, results to stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from crawler import __version__
from crawler.base.errors import ErrcatError
from crawler.base.progress import REPORTER
from crawler.base.sink import echo


def _usage_line(exc: click.ClickException) -> str:
    """Click's error as errcat's one line: ``errcat: no such command 'x' (see 'errcat --help')``."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    if message[:1].isupper() and not message[1:2].isupper():  # "No such ..." but not "URL ..."
        message = message[0].lower() + message[1:]
    if not isinstance(exc, click.UsageError):
        return f"errcat: {message}"
    ctx = exc.ctx
    if ctx is None:  # Click's parser raises some errors (a missing option value) without one
        return f"errcat: {message} (see 'errcat --help')"
    names = []
    while ctx is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    names[-1] = "errcat"  # the root's name is however it was started (errcat, python -m crawler)
    return f"errcat: {message} (see '{' '.join(reversed(names))} --help')"


class ErrcatGroup(click.Group):
    """Turns every ErrcatError, and Click's own usage errors, into one line on stderr and its exit
    code (2 for usage errors).

    The message may quote a crawled repository or a dataset (a path, a name, a ref): it is
    printed through ``sink`` like every other line, the last line of defence."""

    def main(
        self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None, standalone_mode: bool = True, **extra: Any
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        # Click's standalone mode prints a usage block for a usage error; errcat prints one line,
        # so it runs Click non-standalone and reports what Click would have printed itself.
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # a bare `errcat`: the help is the answer
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            REPORTER.clear()
            echo(_usage_line(exc), err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            REPORTER.clear()
            echo("errcat: interrupted", err=True)
            sys.exit(1)
        # Non-standalone, Click returns a command's return value, or the code of ctx.exit(code).
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ErrcatError as exc:
            if os.environ.get("ERRCAT_DEBUG"):
                raise
            REPORTER.clear()
            echo(f"errcat: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group("errcat", cls=ErrcatGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="errcat")
def main() -> None:
    """errcat builds error catalogues from source.

    It reads a pinned commit of a Python repository straight from git (or a released wheel),
    finds every raise, every assert with a message, every logged warning or error, every HTTP
    error response and, in the native trees it is told to read, every C++/CUDA and Rust check,
    and writes one schema-validated JSON record per distinct error.

    \b
    Quick start (no git access needed):
      errcat crawl --pypi vllm==0.33.0
      errcat match 'ValueError: ...'     (or a whole traceback on stdin)
      errcat show <ID>
    """
