"""Colour and a pager for a page on a terminal, as ``git show`` does; plain text when piped.

* Colour: ``--color=auto`` (the default) colours when stdout is a terminal, unless ``NO_COLOR``
  is set to a non-empty value (https://no-color.org) or ``TERM`` is ``dumb``; ``always`` and
  ``never`` decide regardless.
* Pager: when stdout is a terminal, the page goes to ``ERRCAT_PAGER``, else ``PAGER``, else
  ``less``; with ``LESS=FRX`` (quit when the page fits one screen, pass colours through, leave
  the page on the screen) and ``LV=-c`` unless the user set them, as git does. An empty pager or
  ``cat`` means no pager, and so does a pager that cannot be started. The command is split as a
  shell would split it but run without a shell.

The page goes out through ``sink.echo_styled``, which makes its text inert before colouring it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from typing import TextIO

from crawler.base.sink import StyledLine, echo_styled

COLOR_CHOICES = ("auto", "always", "never")


def color_wanted(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def pager_command() -> list[str] | None:
    """The pager to run, or None for none."""
    raw = os.environ.get("ERRCAT_PAGER")
    if raw is None:
        raw = os.environ.get("PAGER")
    if raw is None:
        raw = "less"
    try:
        argv = shlex.split(raw)
    except ValueError:  # unbalanced quotes: not a command we can run
        return None
    return argv if argv and argv != ["cat"] else None


def show(lines: Iterable[StyledLine], styles: Mapping[str, str] | None, paging: bool = True) -> None:
    """Write a styled page (plain when ``styles`` is None) to stdout, through the pager when
    stdout is a terminal."""
    argv = pager_command() if paging and _isatty(sys.stdout) else None
    if argv is not None and _through_pager(argv, lines, styles):
        return
    echo_styled(lines, styles)


def _through_pager(argv: list[str], lines: Iterable[StyledLine], styles: Mapping[str, str] | None) -> bool:
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    assert proc.stdin is not None
    try:
        echo_styled(lines, styles, to=proc.stdin)
        proc.stdin.close()
    except BrokenPipeError:  # the reader quit the pager before the end of the page
        pass
    while True:
        try:
            proc.wait()
            return True
        except KeyboardInterrupt:  # less takes ^C for itself; wait until it is closed
            continue
