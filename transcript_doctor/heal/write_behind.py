"""A file whose writes reach the OS on a second thread, while the caller goes on computing
(docs/heal.md §One pass, "The write overlaps the replay").

A heal that writes produces the healed bytes during its verification replay. Copying them into
the page cache is a system call during which Python releases the GIL, so a thread that makes the
calls lets the kernel's copy run beside the replay on another core instead of after it.

`WriteBehindFile` is an `io.FileIO` for a `io.BufferedWriter` to sit on:

* the first write goes through at once, on the caller's thread (its kill point and its errors
  come exactly where a plain file has them);
* later writes are queued (at most `DEPTH` blocks, so memory stays bounded) and written, in order
  and completely, by one daemon thread;
* an error of the thread (an `OSError`: a full disk) is raised on the caller's thread by the
  next `write`, `drain` or `close`, and by every one after; the thread writes nothing more;
* `drain()` returns when every queued block is in the file; `close()` drains first.
"""

from __future__ import annotations

import io
import queue
import threading
from typing import Any

DEPTH = 8  # queued blocks (of the writer's buffer size) before `write` waits for the thread
_STOP = None


class WriteBehindFile(io.FileIO):
    """See the module docstring. Subclasses may override `write_through` (one OS write) and
    `first_write` (called after the first bytes reached the file)."""

    _queue: queue.Queue[bytes | None] | None = None
    _thread: threading.Thread | None = None
    _error: Exception | None = None
    _wrote_first = False

    def write_through(self, data: Any) -> int:
        """One write to the OS."""
        return super().write(data) or 0

    def first_write(self) -> None:
        """Called once, on the caller's thread, when the first bytes are in the file."""

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to a closed file")
        self._raise_pending()
        size = memoryview(data).nbytes
        if not size:
            return 0
        if not self._wrote_first:
            self._write_all(data)
            self._wrote_first = True
            self.first_write()
            return size
        if self._queue is None:
            self._start()
        assert self._queue is not None
        self._queue.put(bytes(data))  # the buffered writer reuses its buffer after the call: copy it
        return size

    def drain(self) -> None:
        """Wait until every queued block is written; raise the thread's error, if any."""
        if self._queue is not None:
            self._queue.join()
        self._raise_pending()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._stop()
        finally:
            super().close()
        self._raise_pending()

    # -- the thread ------------------------------------------------------------------------

    def _start(self) -> None:
        self._queue = queue.Queue(maxsize=DEPTH)
        self._thread = threading.Thread(target=self._run, name="tdoc-write-behind", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        if self._queue is None or self._thread is None:
            return
        self._queue.put(_STOP)
        self._thread.join()
        self._queue = self._thread = None

    def _run(self) -> None:
        assert self._queue is not None
        take, done = self._queue.get, self._queue.task_done
        while True:
            block = take()
            try:
                if block is _STOP:
                    return
                if self._error is None:
                    self._write_all(block)
            except Exception as exc:  # noqa: BLE001 - the caller's next call raises it
                self._error = exc
            finally:
                done()

    def _write_all(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        while view:
            written = self.write_through(view)
            if written <= 0:
                raise OSError(f"the write of {len(view)} bytes wrote nothing")
            view = view[written:]

    def _raise_pending(self) -> None:
        if self._error is not None:  # (kept: every later call fails too)
            raise self._error
