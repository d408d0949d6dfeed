"""An ``errcat`` process's last objects left to the system, not freed one by one.

A crawl ends holding millions of small objects (the cached results' sites, the records, the joins'
rows); freeing them by reference counting as each frame returns, then again as the interpreter
shuts down, took ~0.5 s of CPU of a one-file crawl of vLLM (a tenth of it), for memory the system
takes back at once when the process exits. So, in a process that ``errcat``'s own entry point
started (:func:`run`, and only there: a library caller or a test runner calling the command in its
own process frees as usual), a command that makes one dataset and ends (``errcat crawl``; not a
history or a sync, whose crawls follow one another) says so (:func:`leave_to_exit`), the crawl
:func:`hold`\\ s what its frames leave behind, and the process then exits without tearing anything
down: atexit's functions run, the standard streams are flushed, then ``os._exit`` with the
command's code. Nothing is written at exit but what the streams hold: every file of a dataset is
written (and swapped in) before the command returns.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

#: Whether this process is ``run``'s, and what it leaves to the system at exit (None: objects are
#: freed as usual, not ``leave_to_exit``).
_running = False
_held: list[Any] | None = None


def leave_to_exit() -> None:
    """From now on, what is held is left to the process's exit (nothing, outside :func:`run`)."""
    global _held
    if _running and _held is None:
        _held = []


def holding() -> bool:
    """Whether what is held is left to the exit (then the cycle collector, turned on again, must
    not walk it: ``gc.freeze()`` first, or each full collection walks millions of objects)."""
    return _held is not None


def hold(*objects: Any) -> None:
    """Keep ``objects`` alive until the process exits (nothing, outside :func:`run`)."""
    if _held is not None:
        _held.append(objects)


def run(main: Callable[[], Any]) -> None:
    """Run a command's ``main`` (which ends by raising SystemExit, as Click's standalone mode does);
    when anything was held, exit at once with its code, else as Python does. An exception other
    than SystemExit propagates as it would."""
    global _held, _running
    _running = True
    try:
        main()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    finally:
        _running = False
        held, _held = _held or [], None
    if not held or threading.active_count() > 1 or not (code is None or isinstance(code, int)):
        held.clear()  # (freed here, as they would have been)
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # a closed pipe: Python's own exit says 120
        code = code or 120
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code or 0)
