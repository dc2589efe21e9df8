"""eve session event streams (`GET /eve/v1/session/<id>/stream`, NDJSON), versions <= 26 and 27."""

from . import checks  # noqa: F401  (registers the eve checks)
from .store import EveKind

KINDS = [EveKind()]
