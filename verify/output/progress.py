"""Progress on a terminal while games are checked or scenarios played (rich.progress): what is
done, of how many, states explored per second and the time elapsed. Silent where standard error
is not a terminal, and under --quiet or --json."""
from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["RunProgress", "shows_progress"]


def shows_progress(quiet: bool, as_json: bool) -> bool:
    """Whether a command shows progress: on a terminal, unless asked to be quiet or to print JSON."""
    return sys.stderr.isatty() and not quiet and not as_json


class RunProgress:
    """A progress bar over *what* (games, scenarios), told of each one done by calling it."""

    def __init__(self, what: str, enabled: bool, detail: str = "", console: Console | None = None,
                 total: int | None = None):
        self.what, self.enabled, self.detail, self.total = what, enabled, detail, total
        self.console = console if console is not None else Console(stderr=True)
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._states = 0
        self._start = time.perf_counter()

    def __enter__(self) -> "RunProgress":
        if self.enabled:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                                 console=self.console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(f"{self.what}{self.detail}", total=self.total, rate="")
        return self

    def __call__(self, done: int, total: int, label: str, states: int = 0) -> None:
        if self._bar is None or self._task is None:
            return
        self._states += states
        elapsed = max(time.perf_counter() - self._start, 1e-6)
        rate = f"{self._states / elapsed:,.0f} states/s" if self._states else ""
        self._bar.update(self._task, total=total, completed=done, rate=rate,
                         description=f"{self.what}{self.detail}: {label}")

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
