"""The write-behind file the heal's temporary file sits on (heal/write_behind.py): every byte
in order, an error of the writer thread raised on the caller's thread, nothing left running."""

from __future__ import annotations

import errno
import io
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.heal import write_behind
from transcript_doctor.heal.write_behind import WriteBehindFile


def _open(path: Path, cls: type[WriteBehindFile] = WriteBehindFile) -> WriteBehindFile:
    return cls(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")


@settings(max_examples=40, deadline=None)
@given(blocks=st.lists(st.binary(max_size=3000), max_size=40), buffer=st.sampled_from([1, 7, 512, 1 << 16]))
def test_every_byte_arrives_in_order(tmp_path_factory: pytest.TempPathFactory, blocks: list[bytes], buffer: int) -> None:
    path = tmp_path_factory.mktemp("wb") / "out.bin"
    raw = _open(path)
    with io.BufferedWriter(raw, buffer_size=buffer) as fh:
        for block in blocks:
            fh.write(block)
        fh.flush()
        raw.drain()
        assert path.read_bytes() == b"".join(blocks)  # drained: all of it is in the file
    assert raw.closed and path.read_bytes() == b"".join(blocks)


def test_the_first_write_is_made_on_the_callers_thread(tmp_path: Path) -> None:
    seen: list[tuple[bytes, str]] = []

    class Recording(WriteBehindFile):
        def write_through(self, data: object) -> int:
            seen.append((bytes(data), threading.current_thread().name))  # type: ignore[call-overload]
            return super().write_through(data)

        def first_write(self) -> None:
            seen.append((b"<first>", threading.current_thread().name))

    raw = _open(tmp_path / "out.bin", Recording)
    raw.write(b"one")
    raw.write(b"two")
    raw.close()
    caller = threading.current_thread().name
    assert seen[:2] == [(b"one", caller), (b"<first>", caller)]
    assert seen[2] == (b"two", "tdoc-write-behind")
    assert (tmp_path / "out.bin").read_bytes() == b"onetwo"


def test_a_short_write_is_completed(tmp_path: Path) -> None:
    class Short(WriteBehindFile):
        def write_through(self, data: object) -> int:
            return super().write_through(memoryview(data)[:3])  # type: ignore[arg-type]

    raw = _open(tmp_path / "out.bin", Short)
    for block in (b"abcdefgh", b"ijklmnopqrstu", b"v"):
        raw.write(block)
    raw.close()
    assert (tmp_path / "out.bin").read_bytes() == b"abcdefghijklmnopqrstuv"


def test_an_error_of_the_thread_is_raised_by_the_next_call_and_every_later_one(tmp_path: Path) -> None:
    calls = {"n": 0}

    class FillsUp(WriteBehindFile):
        def write_through(self, data: object) -> int:
            calls["n"] += 1
            if calls["n"] == 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return super().write_through(data)

    raw = _open(tmp_path / "out.bin", FillsUp)
    raw.write(b"a")
    raw.write(b"b")
    raw.write(b"c")  # fails on the thread
    with pytest.raises(OSError) as first:
        raw.drain()
    assert first.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        raw.write(b"d")
    with pytest.raises(OSError):
        raw.close()
    assert raw.closed and calls["n"] == 3  # nothing written after the failure
    assert (tmp_path / "out.bin").read_bytes() == b"ab"


def test_a_queue_one_block_deep_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write_behind, "DEPTH", 1)
    release = threading.Event()

    class Slow(WriteBehindFile):
        def write_through(self, data: object) -> int:
            if self._wrote_first:
                release.wait()  # the thread holds its block until the caller has queued more
            return super().write_through(data)

    raw = _open(tmp_path / "out.bin", Slow)
    raw.write(b"0")
    writer = threading.Thread(target=lambda: [raw.write(bytes([48 + i])) for i in range(1, 6)])
    writer.start()
    release.set()
    writer.join()
    raw.close()
    assert (tmp_path / "out.bin").read_bytes() == b"012345"


def test_close_stops_the_thread(tmp_path: Path) -> None:
    raw = _open(tmp_path / "out.bin")
    raw.write(b"x")
    raw.write(b"y")
    thread = raw._thread
    assert thread is not None and thread.is_alive()
    raw.close()
    assert not thread.is_alive() and raw.closed
    raw.close()  # a second close does nothing
    with pytest.raises(ValueError):
        raw.write(b"z")
