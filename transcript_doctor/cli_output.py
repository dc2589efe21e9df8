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
    if output is not None:
        write_file(output, write)
        return
    try:
        write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def write_file(output: Path, write: Callable[[TextIO], object]) -> None:
    import tempfile

    directory = output.resolve().parent
    if not directory.is_dir():
        raise TdocError(f"--output {output}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, output)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise TdocError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
