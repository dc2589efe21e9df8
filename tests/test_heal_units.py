"""Units of the heal pipeline: patches, open-writer detection, stale temporaries, backup names."""

from __future__ import annotations

import io
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.fixes.jsonl import LinePlan, iter_applied, unified_diff
from transcript_doctor.heal import backup as backups
from transcript_doctor.heal.inuse import holders, writers
from transcript_doctor.model import Edit

HUNK = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$")


def apply_patch(old: bytes, patch: bytes) -> bytes:
    """A reference applier of unified diffs (what `patch`/`git apply` do with one file)."""
    lines = old.splitlines(keepends=True)
    body = patch.split(b"\n", 2)[2].splitlines(keepends=True)
    out: list[bytes] = []
    done = 0
    i = 0
    while i < len(body):
        m = HUNK.match(body[i].decode().rstrip("\n"))
        assert m, body[i]
        start, count = int(m.group(1)), int(m.group(2))
        start = start if count else start + 1
        out.extend(lines[done:start - 1])
        done = start - 1
        i += 1
        while i < len(body) and not body[i].startswith(b"@@"):
            mark, text = body[i][:1], body[i][1:]
            if i + 1 < len(body) and body[i + 1].startswith(b"\\ No newline"):
                text = text[:-1]
                i += 1
            if mark in (b" ", b"-"):
                assert lines[done] == text, (lines[done], text)
                done += 1
            if mark in (b" ", b"+"):
                out.append(text)
            i += 1
    out.extend(lines[done:])
    return b"".join(out)


line_text = st.text(alphabet="ab{}\":,", min_size=0, max_size=6)


@st.composite
def file_and_plan(draw: st.DrawFn) -> tuple[bytes, LinePlan]:
    texts = draw(st.lists(line_text, min_size=1, max_size=12))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    data = ending.join(texts) + (ending if draw(st.booleans()) else "")
    count = len(data.encode().splitlines())
    if count == 0:
        data, count = "x\n", 1
    edits = []
    for line in draw(st.sets(st.integers(1, count), max_size=count)):
        if draw(st.booleans()):
            edits.append(Edit("delete", line=line))
        else:
            edits.append(Edit("replace", line=line, text="\n".join(draw(st.lists(line_text, min_size=1, max_size=3)))))
    return data.encode(), LinePlan.from_edits(edits)


@settings(max_examples=300, deadline=None)
@given(file_and_plan())
def test_the_patch_applies_to_exactly_what_the_heal_writes(case: tuple[bytes, LinePlan]) -> None:
    data, plan = case
    written = b"".join(iter_applied(io.BytesIO(data).readlines(), plan))
    if not plan:
        return
    patch = unified_diff(io.BytesIO(data), plan, "a/f", "b/f").encode()
    assert apply_patch(data, patch) == written


def _fake_proc(root: Path, pid: int, fd: int, target: Path, flags: int) -> None:
    (root / str(pid) / "fd").mkdir(parents=True)
    (root / str(pid) / "fdinfo").mkdir()
    (root / str(pid) / "fd" / str(fd)).symlink_to(target)
    (root / str(pid) / "fdinfo" / str(fd)).write_text(f"pos:\t0\nflags:\t{flags:o}\nmnt_id:\t1\n")


def test_writers_are_told_from_readers_by_their_fdinfo_flags(tmp_path: Path) -> None:
    journal = tmp_path / "wire.jsonl"
    journal.write_bytes(b"{}\n")
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"{}\n")
    proc = tmp_path / "proc"
    _fake_proc(proc, 101, 3, journal, os.O_RDONLY)  # a reader
    _fake_proc(proc, 102, 7, journal, os.O_WRONLY | os.O_APPEND)  # the agent appending
    _fake_proc(proc, 103, 4, journal, os.O_RDWR)  # SQLite-style read-write
    _fake_proc(proc, 104, 5, other, os.O_WRONLY)  # another file
    (proc / "self").mkdir()  # not a pid
    assert writers(journal, proc) == [102, 103]
    assert [(h.pid, h.writing) for h in holders(journal, proc)] == [(101, False), (102, True), (103, True)]
    assert writers(other, proc) == [104]
    assert writers(tmp_path / "missing.jsonl", proc) == []


def test_stale_temporaries_go_and_everything_else_stays(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(b"{}\n")
    names = {
        ".wire.jsonl.abc.tdoc-tmp": True,  # a killed write's temporary
        ".wire.jsonl.1-2.tdoc-tmp.partial": True,  # a killed --no-backup copy
        "wire.jsonl.tdoc-backup-20260101T000000000000Z.partial": True,
        "wire.jsonl.tdoc-backup-20260101T000000000000Z.partial-journal": True,
        "wire.jsonl.tdoc-backup-20260101T000000000000Z": False,  # a complete backup
        ".other.jsonl.abc.tdoc-tmp": False,  # another file's
        "wire.jsonl.bak.partial": False,  # not tdoc's naming
    }
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "proc-of-nobody").mkdir()  # a /proc in which no process holds anything open
    removed = backups.remove_stale(path, proc=tmp_path / "proc-of-nobody")
    assert sorted(p.name for p in removed) == sorted(n for n, stale in names.items() if stale)
    assert all((tmp_path / n).exists() != stale for n, stale in names.items())


def test_without_proc_only_old_leftovers_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(b"{}\n")
    fresh = tmp_path / ".wire.jsonl.new.tdoc-tmp"
    old = tmp_path / ".wire.jsonl.old.tdoc-tmp"
    fresh.write_bytes(b"x")
    old.write_bytes(b"x")
    long_ago = time.time() - backups.STALE_WITHOUT_PROC - 60
    os.utime(old, (long_ago, long_ago))
    assert backups.remove_stale(path, proc=tmp_path / "no-proc-here") == [old]
    assert fresh.exists()


def test_backups_in_a_backup_dir_mirror_the_file_path(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    dest_dir = tmp_path / "backups"
    dest_dir.mkdir()
    one = backups.backup_path(tmp_path / "a" / "wire.jsonl", dest_dir)
    two = backups.backup_path(tmp_path / "b" / "wire.jsonl", dest_dir)
    real = Path(os.path.realpath(tmp_path))
    assert one.parent == dest_dir / real.relative_to(real.anchor) / "a" and one.parent != two.parent
    assert one.name.startswith("wire.jsonl.tdoc-backup-") and one.name.endswith("Z")
    beside = backups.backup_path(tmp_path / "a" / "wire.jsonl", None)
    assert beside.parent == tmp_path / "a"


def test_library_heal_options_take_paths_as_strings(tmp_path: Path) -> None:
    """`heal_paths` called from Python with `output="…"` writes the healed copy (was an AttributeError)."""
    from transcript_doctor.core import ScanConfig
    from transcript_doctor.healing import heal_paths
    from transcript_doctor.stores import HealOptions

    journal = Path(__file__).parent.parent / "fixtures" / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl"
    out = tmp_path / "healed.jsonl"
    options = HealOptions(mode="output", output=str(out), backup_dir=str(tmp_path / "b"))  # type: ignore[arg-type]
    assert options.output == out and options.backup_dir == tmp_path / "b"
    results, _ = heal_paths([str(journal)], ScanConfig(), options)
    assert results[0].written and out.read_bytes() != journal.read_bytes()


def test_a_file_that_sat_still_is_matched_by_its_status_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Modified well before it was read: size, mtime, ctime and inode decide, nothing is re-read."""
    from transcript_doctor.fixes import fingerprint as fp

    path = tmp_path / "wire.jsonl"
    path.write_bytes(b'{"a":1}\n')
    taken = time.time_ns() + 10 * fp.RACY_NS  # as if read long after its last write
    seen = fp.Fingerprint.from_stat(path.stat(), fp.file_sha256(path), taken)
    monkeypatch.setattr(fp, "file_sha256", lambda _p: (_ for _ in ()).throw(AssertionError("re-read")))
    assert seen.matches(path)


@pytest.mark.parametrize("change", ["append", "same-size", "same-size-old-mtime", "replaced"])
def test_any_change_after_the_read_is_seen(tmp_path: Path, change: str) -> None:
    """Checked both as a racy read (content hash) and as a settled one (status fields)."""
    from transcript_doctor.fixes.fingerprint import RACY_NS, Fingerprint, file_sha256

    path = tmp_path / "wire.jsonl"
    path.write_bytes(b'{"a":1}\n')
    st, digest = path.stat(), file_sha256(path)
    reads = [Fingerprint.from_stat(st, digest, taken) for taken in (time.time_ns(), time.time_ns() + 10 * RACY_NS)]
    assert all(r.matches(path) for r in reads)
    _next_timestamp_tick(tmp_path, st.st_ctime_ns)  # the change is stamped later than the read file was
    if change == "append":
        with open(path, "ab") as fh:
            fh.write(b'{"b":2}\n')
    elif change.startswith("same-size"):
        with open(path, "r+b") as fh:
            fh.write(b'{"a":2}\n')
        if change == "same-size-old-mtime":  # the writer puts the old mtime back: ctime still moves
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:  # another file renamed over it, with the old mtime and the same size
        new = tmp_path / "new"
        new.write_bytes(b'{"a":2}\n')
        os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(new, path)
    assert [r.matches(path) for r in reads] == [False, False]


def _next_timestamp_tick(directory: Path, after_ns: int) -> None:
    """Wait until the file system stamps new writes later than `after_ns` (its clock is coarse:
    a write right after another may share its timestamp). A condition, not a sleep."""
    probe = directory / "probe"
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns > after_ns:
            probe.unlink()
            return


@pytest.mark.parametrize("how", ["hashed", "kernel", "kernel-refused"])
def test_a_file_backup_holds_the_original_bytes_whichever_way_it_is_copied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    import errno
    import hashlib

    source = tmp_path / "wire.jsonl"
    data = os.urandom(3 * (1 << 20) + 17)  # several copy calls and a ragged end
    source.write_bytes(data)
    if how == "kernel-refused":  # e.g. across file systems: the user-space copy takes over
        def exdev(*_a: object) -> int:
            raise OSError(errno.EXDEV, "cross-device")

        monkeypatch.setattr(backups, "_copy_range", exdev)
    made = backups.copy_file(source, tmp_path / "copy", source.stat(), hashed=how == "hashed")
    assert made.path.read_bytes() == data
    assert made.sha256 == (hashlib.sha256(data).hexdigest() if how == "hashed" else "")
    assert not list(tmp_path.glob("*.partial"))
