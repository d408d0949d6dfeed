"""Progress on stderr: a bar on a terminal, plain lines now and then anywhere else (CI logs, pipes).

Every command reports through the one ``REPORTER``. Library code takes a plain callable,
``progress(message)``, for notes (one line each, always shown), and wraps counted work in
``task(progress, what, total, unit)``: with the reporter that is a live bar (what it is doing,
done/total, percent, elapsed, ETA) redrawn in place at most ten times a second, or, when stderr
is not a terminal, a line when the work starts, one every ``ERRCAT_PROGRESS_INTERVAL`` seconds
(default 10) and one when it ends; with any other callable (tests, library users) it is one note.

Standard library only, and cheap to import: ``errcat match`` must start fast. (tqdm writes its
``\\r`` frames into a log that is not a terminal; rich prints nothing live off a terminal and
takes 50-150 ms to import on the 2-core machine, a tenth of a whole ``errcat match``; either would
still need the plain-lines mode written here, which is most of this module.)

``ERRCAT_PROGRESS=bar`` or ``=lines`` overrides the choice a terminal would make.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

Progress = Callable[[str], None]

BAR_REFRESH = 0.1  # seconds between two frames of a bar
RATE_WINDOW = 10.0  # seconds of recent progress an ETA is estimated from
DEFAULT_INTERVAL = 10.0  # seconds between two lines off a terminal


def quiet(_: str) -> None:
    """The progress of a caller that wants none."""


def shown(text: str) -> str:
    """The one place where progress text meets the terminal: messages name files from a crawled
    repository, so they pass ``sink.terminal`` like every other line errcat prints."""
    from crawler.base.sink import terminal

    return terminal(text)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def _amount(n: float, unit: str) -> str:
    return f"{n / 1e6:.1f}" if unit == "bytes" else f"{int(n):,}"


def _unit(unit: str) -> str:
    return "MB" if unit == "bytes" else unit


def _opening(what: str, total: int | None, unit: str) -> str:
    return f"{what}: {_amount(total, unit)} {_unit(unit)}" if total is not None else f"{what} ..."


class Task:
    """One piece of counted work; ``advance`` or ``update`` it, then ``close`` (or use ``with``)."""

    def __init__(self, reporter: Reporter, what: str, total: int | None, unit: str) -> None:
        self.reporter, self.what, self.total, self.unit = reporter, what, total, unit
        self.done = 0
        self.started = self._last = reporter.clock()
        self.closed = False
        # (time, done) over about the last RATE_WINDOW seconds: the ETA follows the current pace,
        # not the average since the start (a validator is built, a pool starts, on the clock of
        # the first few items).
        self._samples: list[tuple[float, int]] = [(self.started, 0)]

    def __enter__(self) -> Task:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.close(finished=exc_type is None)

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = self.reporter.clock()
        if now - self._samples[-1][0] >= RATE_WINDOW / 20:
            self._samples.append((now, done))
            while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW:
                del self._samples[0]
        self.reporter._tick(self)

    def close(self, finished: bool = True) -> None:
        if not self.closed:
            self.closed = True
            self.reporter._end(self, finished)

    # ------------------------------------------------------------------ text

    def elapsed(self) -> float:
        return self.reporter.clock() - self.started

    def eta(self) -> float | None:
        if not self.total or not self.done or self.done >= self.total:
            return None
        since, then = self._samples[0]
        if self.done <= then or (len(self._samples) < 3 and self.done * 100 < self.total):
            return None  # too little seen yet to tell a pace
        return (self.reporter.clock() - since) * (self.total - self.done) / (self.done - then)

    def counts(self) -> str:
        if self.total:
            return f"{_amount(self.done, self.unit)}/{_amount(self.total, self.unit)} {_unit(self.unit)}"
        return f"{_amount(self.done, self.unit)} {_unit(self.unit)}"

    def rate(self) -> str:
        elapsed = self.elapsed()
        if self.unit != "bytes" or elapsed <= 0:
            return ""
        return f"{self.done / elapsed / 1e6:.1f} MB/s"

    def line(self) -> str:
        """A progress line for a log: ``validating: 4,123/8,251 files (49%), 0:03, about 0:03 left``."""
        parts = [self.counts() + (f" ({100 * self.done // self.total}%)" if self.total else "")]
        parts.append(_clock(self.elapsed()))
        if self.rate():
            parts.append(self.rate())
        eta = self.eta()
        if eta is not None:
            parts.append(f"about {_clock(eta)} left")
        return f"{self.what}: {', '.join(parts)}"

    def summary(self) -> str:
        counts = self.counts() if self.total and self.done != self.total else f"{_amount(self.done, self.unit)} {_unit(self.unit)}"
        return f"{self.what}: {counts} in {self.elapsed():.1f}s"

    def frame(self, width: int, fancy: bool) -> str:
        """One frame of the bar, at most ``width`` characters."""
        eta = self.eta()
        tail = "  ".join(
            filter(
                None,
                [
                    self.counts(),
                    f"{100 * self.done // self.total:3d}%" if self.total else "",
                    self.rate(),
                    _clock(self.elapsed()),
                    f"ETA {_clock(eta)}" if eta is not None else ("" if not self.total else "ETA 0:00" if self.done >= self.total else "ETA -:--"),
                ],
            )
        )
        what = self.what
        room = width - len(tail) - 4
        if self.total and room >= len(what) + 12:
            size = min(40, room - len(what))
            filled = size * min(self.done, self.total) // self.total
            full, empty = ("\u2588", "\u2591") if fancy else ("#", "-")
            return f"{what}  {full * filled}{empty * (size - filled)}  {tail}"
        text = f"{what}  {tail}"
        return text if len(text) <= width else text[: max(0, width - 1)] + "\u2026" * fancy


class Reporter:
    """Writes notes and tasks to stderr (looked up at each write: a test runner swaps it)."""

    def __init__(
        self, stream: TextIO | None = None, mode: str | None = None, interval: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._mode = mode
        self._interval = interval
        self.clock = clock
        self._active: Task | None = None
        self._drawn = False  # a bar frame is on the current line

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def mode(self) -> str:
        if self._mode:
            return self._mode
        wanted = os.environ.get("ERRCAT_PROGRESS", "")
        if wanted in ("bar", "lines"):
            return wanted
        stream = self.stream
        tty = getattr(stream, "isatty", lambda: False)()
        return "bar" if tty and os.environ.get("TERM") != "dumb" else "lines"

    def interval(self) -> float:
        if self._interval is not None:
            return self._interval
        try:
            return max(0.0, float(os.environ.get("ERRCAT_PROGRESS_INTERVAL", DEFAULT_INTERVAL)))
        except ValueError:
            return DEFAULT_INTERVAL

    # ------------------------------------------------------------------ the public face

    def __call__(self, message: str) -> None:
        """A note: one line, whatever else is on the screen."""
        self._erase()
        self._write(shown(message) + "\n")
        if self._active is not None:
            self._draw(self._active)

    def clear(self) -> None:
        """Take an unfinished task's bar off the screen (an error line follows)."""
        self._erase()
        self._active = None

    def task(self, what: str, total: int | None = None, unit: str = "") -> Task:
        task = Task(self, what, total, unit)
        self._erase()
        self._active = task
        if self.mode() == "bar":
            self._draw(task)
        else:
            self._write(shown(_opening(what, total, unit)) + "\n")
        return task

    # ------------------------------------------------------------------ drawing

    def _write(self, text: str) -> None:
        stream = self.stream
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # stderr closed or gone (a closed pipe): progress is not worth dying for
            pass

    def _width(self) -> int:
        try:
            return max(20, os.get_terminal_size(self.stream.fileno()).columns - 1)
        except (OSError, ValueError, AttributeError):
            return 79

    def _fancy(self) -> bool:
        return "utf" in (getattr(self.stream, "encoding", "") or "").lower()

    def _draw(self, task: Task) -> None:
        self._write("\r\x1b[K" + shown(task.frame(self._width(), self._fancy())))
        self._drawn = True
        task._last = self.clock()

    def _erase(self) -> None:
        if self._drawn:
            self._write("\r\x1b[K")
            self._drawn = False

    def _tick(self, task: Task) -> None:
        if task is not self._active or task.closed:
            return
        now = self.clock()
        if self.mode() == "bar":
            if now - task._last >= BAR_REFRESH or (task.total is not None and task.done >= task.total):
                self._draw(task)
        elif now - task._last >= self.interval():
            self._write(shown(task.line()) + "\n")
            task._last = now

    def _end(self, task: Task, finished: bool) -> None:
        if task is self._active:
            self._erase()
            self._active = None
        if finished:
            self._write(shown(task.summary()) + "\n")


#: The reporter every command uses.
REPORTER = Reporter()


class _Untracked:
    """What ``task`` gives a plain callable: counts go nowhere."""

    done = 0
    total: int | None = None

    def __enter__(self) -> _Untracked:
        return self

    def __exit__(self, *_: Any) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def close(self, finished: bool = True) -> None:
        pass


def task(progress: Progress, what: str, total: int | None = None, unit: str = "") -> Task | _Untracked:
    """Counted work on ``progress``: a bar or periodic lines with a Reporter, one note otherwise."""
    if isinstance(progress, Reporter):
        return progress.task(what, total, unit)
    progress(_opening(what, total, unit))
    return _Untracked()
