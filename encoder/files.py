"""Files: atomic writes and content hashes, shared by every layer that keeps results on disk.

The vocabulary, the parse cache, run folders (config, metrics), the VADER archive, prediction output, the
main job's report, the export bundle and the benchmarks' results all write through here, so a killed
process never leaves a half-written file that a later run would trust, and every stage hashes files the
same way. A file is written to a temporary name beside its target (``.<name>.<pid>.tmp`` unless the
caller names it), flushed to disk and renamed into place; on any error the temporary file is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def temp_path(path: str | Path) -> Path:
    """The default temporary name of a write to ``path``: hidden, beside it, unique to this process."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.tmp")


@contextmanager
def atomic_path(path: str | Path, temp: str | Path | None = None) -> Iterator[Path]:
    """Yield a temporary path for the caller to write (by any means); on success flush it to disk and
    rename it to ``path``, on error remove it. ``temp`` overrides the temporary name (same folder)."""
    target = Path(path)
    tmp = Path(temp) if temp is not None else temp_path(target)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """``open`` for writing (``"w"`` UTF-8 text or ``"wb"``) whose file appears at ``path`` only when
    the ``with`` block completes."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', not {mode!r}")
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding="utf-8" if mode == "w" else None) as f:
            yield f


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write UTF-8 text to ``path`` atomically."""
    with atomic_open(path) as f:
        f.write(text)


def write_json(path: str | Path, data: dict | list, indent: int | None = 1) -> None:
    """Write JSON (indented by default, non-ASCII kept) atomically."""
    write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False))


def copy_atomic(source: str | Path, target: str | Path) -> None:
    """Copy a file to ``target`` atomically."""
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sha256_mismatch(path: str | Path, recorded: str) -> str | None:
    """ "sha256 <found>… is not the recorded <recorded>…" when the file's digest is not ``recorded``, else None."""
    found = sha256_file(path)
    return None if found == recorded else f"sha256 {found[:12]}… is not the recorded {recorded[:12]}…"


def checked_version(
    data: object, source: str | Path, *, format: str, what: str, version_field: str, newest: int, error: type[Exception]
) -> int:
    """The version of a versioned JSON document ``data`` read from ``source``: its ``format`` field must be
    ``format`` and its ``version_field`` an int no newer than ``newest``; else ``error`` naming ``source``."""
    if not isinstance(data, dict) or data.get("format") != format:
        raise error(f"{source}: not a parserfree {what} (format field missing or different)")
    version = data.get(version_field)
    if not isinstance(version, int) or version > newest:
        raise error(
            f"{source}: {what} version {version!r} is newer than this parserfree reads ({newest}); "
            "upgrade parserfree to load it"
        )
    return version
