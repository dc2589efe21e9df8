"""tdoc, the transcript doctor: find and heal poisoned AI-agent session histories.

Library API (stable)::

    import transcript_doctor
    report = transcript_doctor.scan("agents/main/wire.jsonl")      # a path, a glob, or a list
    for finding in report.findings:                                  # sorted by path, line, code
        print(finding.code, finding.line, finding.message)
    report.exit_code("error")                                        # 0 / 1 / 2 as the CLI exits
    report.as_dict()                                                 # the `--format json` document

    config = transcript_doctor.ScanConfig(select=["W1", "C201"], jobs=2)
    transcript_doctor.scan(["sessions/"], config)

`Report.files` holds one `FileResult` per input (`error` set when it could not be read);
`Finding.as_dict()` is one `--format ndjson` line. Errors tdoc reports to users are `TdocError`.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any  # noqa: E402

from .errors import TdocError  # noqa: E402

if TYPE_CHECKING:
    from .core import Report, ScanConfig, scan
    from .model import FileResult, Finding

_LAZY = {"Report": "core", "ScanConfig": "core", "scan": "core", "FileResult": "model", "Finding": "model"}


def __getattr__(name: str) -> Any:
    """The scan API and the data model load on first use, so `tdoc --version` and
    `import transcript_doctor.x` stay light."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["FileResult", "Finding", "Report", "ScanConfig", "TdocError", "__version__", "scan"]
