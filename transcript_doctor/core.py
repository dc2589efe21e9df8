"""The scan pipeline: open each store, run the checks of its format, filter, sort."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .model import SEVERITY_RANK, FileResult, Finding, TdocError
from .rules import engine, selected_codes
from .stores import Options, Store, expand_paths, kinds, open_store
from .value_types import Value, replace

if TYPE_CHECKING:
    from .parallel import Progress
    from .stores.shard import Shard

SCHEMA_VERSION = 1


class ScanConfig(Value):
    """What to scan for and how: rule selection, failure threshold, store options, workers.

    `per_path_ignores` holds (glob, selectors) pairs matched against each input relative to
    `root` (the configuration file's directory). `jobs`: worker processes for `scan`; 1 scans in
    this process, None or 0 picks the number of CPUs when the work is large enough to pay for them.
    `skip_unrecognised`: files named on the command line that are readable but no store kind
    recognises are left out instead of being reported as errors.
    """

    __slots__ = ("select", "ignore", "fail_on", "input_format", "options", "per_path_ignores", "root", "jobs",
                 "skip_unrecognised")  # fmt: skip

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None, fail_on: str = "error",
                 input_format: str | None = None, options: Options | None = None,
                 per_path_ignores: list[tuple[str, list[str]]] | None = None, root: Path | None = None,
                 jobs: int | None = 1, skip_unrecognised: bool = False) -> None:  # fmt: skip
        self.select = select
        self.ignore = ignore
        self.fail_on = fail_on
        self.input_format = input_format
        self.options: Options = Options() if options is None else options
        self.per_path_ignores: list[tuple[str, list[str]]] = [] if per_path_ignores is None else per_path_ignores
        self.root: Path = Path.cwd() if root is None else root
        self.jobs = jobs
        self.skip_unrecognised = skip_unrecognised  # drop named files no store kind recognises (pre-commit hooks)

    def codes(self, path: str | None = None) -> set[str]:
        """The selected rule codes, less those the per-path ignores switch off for `path`."""
        try:
            codes = selected_codes(self.select, self.ignore)
            if path is not None and self.per_path_ignores:
                from .config import ignored_codes

                codes -= ignored_codes(self.per_path_ignores, path, self.root)
            return codes
        except KeyError as exc:
            raise TdocError(f"unknown rule selector {exc.args[0]!r} (see `tdoc rules`)") from None


class Report:
    """The result of a scan: one FileResult per input, each with its findings."""

    __slots__ = ("files",)

    def __init__(self, files: list[FileResult]) -> None:
        self.files = files

    @property
    def findings(self) -> list[Finding]:
        return [f for fr in self.files for f in fr.findings]

    def exit_code(self, fail_on: str) -> int:
        if any(fr.refused for fr in self.files):
            return 3
        if any(fr.error for fr in self.files):
            return 2
        threshold = SEVERITY_RANK[fail_on]
        return 1 if any(SEVERITY_RANK[f.severity] >= threshold for f in self.findings) else 0

    def as_dict(self) -> dict[str, Any]:
        findings = self.findings
        by_sev = {"error": 0, "warning": 0, "info": 0}
        for f in findings:
            by_sev[f.severity] += 1
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "tdoc", "version": __version__},
            "summary": {
                "files": len(self.files),
                "sessions": sum(fr.sessions for fr in self.files),
                "findings": len(findings),
                "by_severity": by_sev,
                "fixable": sum(1 for f in findings if f.fix and f.fix.applicability == "safe"),
                "unsafe_fixable": sum(1 for f in findings if f.fix and f.fix.applicability == "unsafe"),
            },
            "files": [fr.as_dict() for fr in self.files],
            "findings": [f.as_dict() for f in findings],
        }


def check_store(store: Store, config: ScanConfig, codes: set[str] | None = None) -> list[Finding]:
    """The selected findings of one store, sorted (the rule engine, `rules/engine.py`)."""
    wanted = config.codes() if codes is None else codes
    return engine.check_store(store, config.options, wanted)


def scan_file(path: Path, display: str, config: ScanConfig, codes: set[str], shard: Shard | None = None) -> FileResult:
    """Scan one input, or the sessions of one `shard` of it (`shards`); an unreadable one becomes a
    FileResult with `error` set."""
    options = config.options if shard is None else replace(config.options, shard=shard)
    try:
        store = open_store(path, display, options, config.input_format)
    except TdocError as exc:
        return FileResult(path=display, format=None, error=str(exc), refused=exc.exit_code == 3)
    if shard is not None and not kinds()[store.format].splits_sessions:  # the file changed kind since `shards.split`
        if shard.index:
            store.close()
            return FileResult(path=display, format=store.format)  # shard 0 scans it whole
    try:
        findings = engine.check_store(store, options, codes)
        sessions = store.session_count
        return FileResult(
            path=display,
            format=store.format,
            sessions=sessions,
            records=store.record_count,
            findings=findings,
            identity=store.session_identity() if sessions == 1 else (None, None),
        )
    except TdocError as exc:
        return FileResult(path=display, format=store.format, error=str(exc), refused=exc.exit_code == 3)
    except OSError as exc:  # the file vanished or became unreadable while it was checked
        from .errors import os_failure

        return FileResult(path=display, format=store.format, error=str(os_failure(display, exc)))
    finally:
        store.close()


def iter_inputs(paths: Iterable[str], allow_empty: bool = False) -> list[tuple[Path, str]]:
    inputs = list(expand_paths(list(paths)))
    if not inputs and not allow_empty:
        raise TdocError("no input files found")
    return inputs


def scan(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    config: ScanConfig | None = None,
    *,
    progress: Progress | None = None,
) -> Report:
    """Scan files, directories and globs for poisoned history; the library entry point.

    `paths` is one path or glob, or several. Every input becomes one `FileResult` (with `error`
    set when it cannot be read), in path order; `Report.findings` lists the findings, sorted.
    `config.jobs` > 1 scans in worker processes with the same result as a serial scan.
    `progress`, if given, is told the amount of work and each file finished.

    >>> report = scan("sessions/")                      # doctest: +SKIP
    >>> report.exit_code("error"), len(report.findings)  # doctest: +SKIP
    """
    from .parallel import known_store, run

    config = config or ScanConfig()
    config.codes()  # an unknown selector is a usage error before any work starts
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    inputs = iter_inputs((os.fspath(p) for p in paths), allow_empty=config.skip_unrecognised)
    if config.skip_unrecognised:
        inputs = [(p, d) for p, d in inputs if known_store(p, d)]
    results = run(inputs, config, progress)
    results.sort(key=lambda fr: fr.path)
    return Report(results)
