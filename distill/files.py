"""Files: atomic writes and content hashes shared by every stage that keeps results on disk.

The parse cache, run folders (config, metrics), the main job's report and the export bundle all write
through here, so a killed process never leaves a half-written file that a later run would trust, and
every stage hashes files the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write UTF-8 text to a temporary file beside ``path``, flush it to disk, then rename it into place."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: str | Path, data: dict | list) -> None:
    """Write JSON (indented, non-ASCII kept) atomically."""
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False))


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
