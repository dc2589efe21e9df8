"""Where the CLI's data goes: stdout (EPIPE-safe) or a file written atomically."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from .errors import TdocError


def deliver(write: Callable[[TextIO], object], output: Path | None = None) -> None:
    """Write the command's data to stdout, or atomically to `output`. A reader that went away
    (`| head`) is not an error: the rest is dropped quietly and the exit code stays the command's."""
    if output is not None and str(output) != "-":  # `-o -`: standard output, as everywhere else
        write_file(output, write)
        return
    try:
        write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def write_file(output: Path, write: Callable[[TextIO], object]) -> None:
    """`--output FILE`: a regular file is replaced atomically (through a symlink, the file it
    names); a device, FIFO or socket already there (`/dev/null`, a named pipe) is written into as
    it is, never replaced by a file; a directory is an error."""
    import stat

    try:
        st: os.stat_result | None = os.stat(output)  # (follows a symlink)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise TdocError(f"--output {output}: {exc.strerror or exc}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise TdocError(f"--output {output}: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with open(output, "w", encoding="utf-8", newline="") as fh:
                write(fh)
        except OSError as exc:
            raise TdocError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
        return
    _replace_file(Path(os.path.realpath(output)) if st is not None else output, st, write)


def _replace_file(target: Path, st: os.stat_result | None, write: Callable[[TextIO], object]) -> None:
    """Write beside `target` and rename over it; the file keeps its mode (`st`), a new one gets
    the umask's."""
    import tempfile

    directory = target.resolve().parent
    if not directory.is_dir():
        raise TdocError(f"--output {target}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, (st.st_mode & 0o7777) if st is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise TdocError(f"--output {target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # (the only way to read it is to set it)
    os.umask(mask)
    return mask


def silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file descriptor (CliRunner)
        pass


def json_text(value: object) -> str:
    """Indented JSON that is written whatever a reader let through (big integers, surrogates)."""
    from .encode import dumps

    return dumps(value, indent=True) + "\n"
