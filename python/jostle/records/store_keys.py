"""How the store names and dates what it keeps: a run's uid (a digest of its record) and its
time (UTC, ISO 8601, to the second), the same for run files and check records."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone


def utc(text) -> str:
    """An ISO 8601 time as the store keeps it: UTC, to the second, `…Z` (a time without a
    zone is read as UTC). ValueError when it is not one."""
    if not isinstance(text, str):
        raise ValueError(f"not a time: {text!r}")
    t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def digest(data: bytes) -> str:
    """The 160 first bits of SHA-256, in hex: a run's identity in the store."""
    return hashlib.sha256(data).hexdigest()[:40]
