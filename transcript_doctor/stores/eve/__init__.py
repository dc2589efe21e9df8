"""eve session event streams (`GET /eve/v1/session/<id>/stream`, NDJSON), versions <= 26 and 27 (see `docs/eve.md`)."""

from .store import EveKind

KINDS = [EveKind()]
