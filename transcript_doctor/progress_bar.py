"""The scan progress bar on stderr, drawn only for work big enough to wait for (and only on a terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class ProgressBar:
    """Implements `parallel.Progress`; rich.progress is imported only when a bar is drawn."""

    MIN_FILES = 20
    MIN_BYTES = 64 * 1024 * 1024

    def __init__(self, console: Console) -> None:
        self._console = console
        self._bar: Any = None
        self._task: Any = None
        self._done = 0
        self._files = 0

    def start(self, files: int, total_bytes: int) -> None:
        if files < self.MIN_FILES and total_bytes < self.MIN_BYTES:
            return
        from rich.progress import BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._files = files
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                             TimeElapsedColumn(), console=self._console, transient=True)  # fmt: skip
        self._task = self._bar.add_task(self._label(), total=max(total_bytes, 1))
        self._bar.start()

    def advance(self, files: int, nbytes: int) -> None:
        if self._bar is not None and self._task is not None:
            self._done += files
            self._bar.update(self._task, advance=nbytes, description=self._label())

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _label(self) -> str:
        return f"scanning {self._done}/{self._files} files"
