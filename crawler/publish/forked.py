"""A share of the work done by a forked process, on Linux.

A forked child sees the parent's data as it was at the fork, without a copy or a pickle, so
the crawl's tail (records rendered and written, related errors scored) splits across the
cores at the cost of sending back only the answers. ``start`` forks a helper that runs a
function and pipes back its pickled answer; ``finish`` waits for it and never raises;
``value`` turns an answer into the value or the error the function raised, as errcat's own
one-line errors. Elsewhere (``available()`` is False) callers do the work themselves: fork
without exec is unsafe on macOS.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

from crawler.base.errors import DataError, OutputError

Helper = tuple[int, int]  # (pid, read end of its pipe)


def available() -> bool:
    return sys.platform.startswith("linux")


def start(fn: Callable[[], Any]) -> Helper:
    """Fork a process that runs ``fn`` and sends back what it returns or raises."""
    read, write = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        raise
    if pid == 0:  # the helper: never returns
        try:
            os.close(read)
            _die_with(parent)
            try:
                answer: tuple[str, Any] = ("ok", fn())
            except DataError as e:
                answer = ("data", str(e))
            except OSError as e:
                answer = ("os", (e.errno, e.strerror, e.filename))
            except BaseException as e:  # noqa: BLE001 - reported by the parent
                answer = ("error", f"{type(e).__name__}: {e}")
            with os.fdopen(write, "wb") as fh:
                pickle.dump(answer, fh, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def _die_with(parent: int) -> None:
    """Have the kernel SIGKILL this helper when its parent dies: a crawl killed mid-write must not
    leave a helper writing into the temporary directory the next crawl removes."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def finish(helper: Helper) -> tuple[str, Any]:
    """A helper's answer, once it has exited; never raises."""
    pid, fd = helper
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError:
        data = b""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # SIGCHLD ignored: the helper was reaped already
        status = 0
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - nothing, or half an answer: the helper died
        signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return "error", "a helper process died" + (f" (signal {signal_number})" if signal_number else "")


def value(answer: tuple[str, Any], doing: str) -> Any:
    """What the helper's function returned, or its failure raised here."""
    kind, payload = answer
    if kind == "ok":
        return payload
    if kind == "data":
        raise DataError(payload)
    if kind == "os":
        raise OSError(*payload)
    raise OutputError(f"{doing}: {payload}")
