"""What a file looked like when tdoc read it: size, mtime and SHA-256 (to detect later changes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20


@dataclass(frozen=True)
class Fingerprint:
    """Size, modification time and SHA-256 of a file as it was read."""

    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> Fingerprint:
        import hashlib  # OpenSSL loads only when a fingerprint is taken (a heal), not for a scan

        st = path.stat()
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                digest.update(chunk)
        return cls(st.st_size, st.st_mtime_ns, digest.hexdigest())
