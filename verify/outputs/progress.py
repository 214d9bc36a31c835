"""Progress on stderr for long runs (``check``, ``report``, ``pictures``, ``confirm``).

Shown only when stderr is a terminal, and only once a stage has run for ``DELAY`` seconds, so
short runs, pipes, files and CI logs get nothing extra: stdout and stderr stay byte-identical
whatever the terminal.  Drawn with ``tqdm`` (a small dependency); where it cannot be imported,
progress is silently not shown.

    prog = Progress.for_stream(sys.stderr)
    with prog.stage("loading specs"):                   # no total: elapsed time, redrawn by a ticker
        specs = api.load(...)
    with prog.stage("pictures", total=len(layouts)) as step:
        for lay in layouts:
            ...
            step()                                      # one done

A stage with a total shows what is done and what is left: ``pictures: 40/107 done, 67 left (00:12 to go)``
(the time to go is estimated from the rate so far, ``?`` before the first item is done).
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import threading
from typing import IO, Any, Callable, Iterator

DELAY = 2.0  # seconds a stage runs before its progress line appears
TICK = 0.25  # redraw interval of a stage without a total


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; missing, progress is not shown
        return None
    return tqdm


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


class Progress:
    """Stages of long work, drawn on ``stream`` when ``enabled`` (see the module docstring)."""

    def __init__(self, stream: IO[str] | None = None, enabled: bool = False, delay: float | None = None) -> None:
        self.stream = stream
        self.enabled = bool(enabled and stream is not None and _tqdm() is not None)
        self.delay = DELAY if delay is None else delay

    @classmethod
    def for_stream(cls, stream: IO[str] | None = None, delay: float | None = None) -> "Progress":
        """Enabled exactly when ``stream`` (default: ``sys.stderr``) is a terminal."""
        stream = sys.stderr if stream is None else stream
        return cls(stream, is_terminal(stream), delay)

    @contextlib.contextmanager
    def stage(self, label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        """A stage of work; yields ``step(n=1)`` to count finished items (no-op without a total)."""
        if not self.enabled:
            yield _noop
            return
        stream = self.stream
        assert stream is not None  # enabled only with a stream (__init__)
        tqdm = _tqdm()
        fmt = ("{desc}: {n_fmt}/{total_fmt} done, {left} left ({remaining} to go)" if total is not None
               else "{desc} [{elapsed}]")
        cols, rows = _screen(stream)
        bar = _bar_class(tqdm)(total=total, desc=label, file=stream, delay=self.delay, leave=False,
                   bar_format=fmt, ncols=cols, nrows=rows, mininterval=TICK, miniters=0)
        stop = threading.Event()
        ticker = threading.Thread(target=_tick, args=(bar, stop), name="ptx-verify-progress", daemon=True)
        stdout = sys.stdout
        sys.stdout = _Clearing(stdout, stream, tqdm)  # lines printed meanwhile do not run into the bar
        ticker.start()

        def step(n: int = 1) -> None:
            bar.update(n)

        try:
            yield step
        finally:
            stop.set()
            ticker.join()
            bar.close()
            sys.stdout = stdout


class _Clearing:
    """stdout while a progress line is drawn: each write first clears the line, then redraws it."""

    def __init__(self, out: IO[str], bar_stream: IO[str], tqdm: Any) -> None:
        self._out, self._bar_stream, self._tqdm = out, bar_stream, tqdm

    def write(self, text: str) -> int:
        with self._tqdm.external_write_mode(file=self._bar_stream):
            n = self._out.write(text)
            self._out.flush()
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)


def _screen(stream: IO[str]) -> tuple[int, int]:
    """Columns and rows of the terminal; one that reports none (a fresh pseudo-terminal, some CI
    consoles) counts as $COLUMNS x $LINES or 80 x 24, so that tqdm still draws."""
    try:
        size = os.get_terminal_size(stream.fileno())
        cols, rows = size.columns, size.lines
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        cols = rows = 0

    def positive(text: str | None, default: int) -> int:
        try:
            v = int(text or "0")
        except ValueError:
            v = 0
        return v if v > 0 else default

    return (cols if cols > 0 else positive(os.environ.get("COLUMNS"), 80)), \
        (rows if rows > 0 else positive(os.environ.get("LINES"), 24))


@functools.lru_cache(maxsize=None)
def _bar_class(tqdm: Any) -> Any:
    """tqdm with ``{left}`` (items not done yet) for the bar format."""

    class Bar(tqdm):
        @property
        def format_dict(self) -> dict[str, Any]:
            d = super().format_dict
            d["left"] = max(0, int(d.get("total") or 0) - int(d.get("n") or 0))
            return d
    return Bar


def _noop(n: int = 1) -> None:
    return None


def _tick(bar: Any, stop: threading.Event) -> None:
    """Redraw (elapsed time) while the main thread works; tqdm shows nothing before its delay."""
    while not stop.wait(TICK):
        try:
            bar.update(0)
        except Exception:
            return


def checking_label(layouts: int, maps: int, files: int) -> str:
    """The label of ``check``'s stage: ``checking 215 layouts and 58 map layouts in 40 spec files``."""
    what = f"{layouts} layout{'' if layouts == 1 else 's'}"
    if maps:
        what += f" and {maps} map layout{'' if maps == 1 else 's'}"
    return f"checking {what} in {files} spec file{'' if files == 1 else 's'}"


NONE = Progress()  # progress off


__all__ = ["DELAY", "NONE", "Progress", "checking_label", "is_terminal"]
