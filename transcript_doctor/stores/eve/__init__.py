"""eve session event streams (`GET /eve/v1/session/<id>/stream`, NDJSON), versions <= 26 and 27 (see `docs/eve.md`).

Discovery imports only the sniffer; `store.py` loads when a file matches.
"""

from ..lazy import LazyKind
from .sniff import sniff_stream

KINDS = [LazyKind("eve-stream", "eve", sniff_stream, f"{__name__}.store:EveKind", jsonl=True)]
