"""tdoc, the transcript doctor: find and heal poisoned AI-agent session histories.

Library API::

    import transcript_doctor
    report = transcript_doctor.scan("agents/main/wire.jsonl")
    for finding in report.findings:
        print(finding.code, finding.line, finding.message)
"""

__version__ = "0.1.0"

from .core import Report, ScanConfig, scan  # noqa: E402
from .model import Finding, TdocError  # noqa: E402

__all__ = ["Finding", "Report", "ScanConfig", "TdocError", "__version__", "scan"]
