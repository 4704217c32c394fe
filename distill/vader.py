"""Built-in data: the VADER sentiment ground-truth corpora (Hutto & Gilbert, ICWSM 2014; MIT licence).

Where the built-in datasets come from. The vaderSentiment 3.3.2 source archive (the wheel lacks the data)
holds ``additional_resources/hutto_ICWSM_2014.tar.gz`` whose ``*_GroundTruth.txt`` files are
tab-separated ``id, mean human sentiment (−4..4), text``. The archive is fetched once with the user's own
pip configuration (or given with ``--archive`` for offline use), verified by sha256, and the four files
are extracted into the cache directory.
"""

from __future__ import annotations

import html
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
from pathlib import Path

from parserfree.distill.files import sha256_file
from parserfree.distill.readers import DataError, RawExample, _lines

ARCHIVE_NAME = "vaderSentiment-3.3.2.tar.gz"
ARCHIVE_SHA256 = "5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9"
INNER_ARCHIVE = "vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz"
CORPORA = {
    "vader-movies": "movieReviewSnippets_GroundTruth.txt",
    "vader-nyt": "nytEditorialSnippets_GroundTruth.txt",
    "vader-amazon": "amazonReviewSnippets_GroundTruth.txt",
    "vader-tweets": "tweets_GroundTruth.txt",
}
CITATION = (
    "C.J. Hutto and E.E. Gilbert. VADER: A Parsimonious Rule-based Model for Sentiment Analysis of "
    "Social Media Text. ICWSM 2014. Data from vaderSentiment 3.3.2 (MIT licence)."
)


def default_cache_dir() -> Path:
    """``$PARSERFREE_CACHE`` if set, else ``~/.cache/parserfree``."""
    return Path(os.environ.get("PARSERFREE_CACHE", Path.home() / ".cache" / "parserfree"))


def _pip_download(dest: Path) -> Path:
    """Fetch the source archive with pip, from inside a virtual environment (an sdist's setup.py runs)."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        if sys.prefix == sys.base_prefix:  # not in a venv: never run a download in the system Python
            venv.create(Path(tmp) / "venv", with_pip=True)
            python = str(Path(tmp) / "venv" / "bin" / "python")
        cmd = [python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "vaderSentiment==3.3.2", "-d", tmp]
        result = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / ARCHIVE_NAME
        if result.returncode != 0 or not got.exists():
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise DataError(f"could not download {ARCHIVE_NAME} with pip ({last}); pass --archive PATH to use a local copy")
        part = dest.with_suffix(".part")
        shutil.copyfile(got, part)
        os.replace(part, dest)
    return dest


def fetch_archive(cache_dir: Path | None = None, archive: str | Path | None = None) -> Path:
    """The verified source archive in the cache: copied from ``archive`` if given, else downloaded once."""
    cache = Path(cache_dir or default_cache_dir()) / "vader"
    cache.mkdir(parents=True, exist_ok=True)
    dest = cache / ARCHIVE_NAME
    if archive is not None:
        src = Path(archive)
        if not src.exists():
            raise DataError(f"{src}: archive not found")
        if sha256_file(src) != ARCHIVE_SHA256:
            raise DataError(f"{src}: sha256 does not match {ARCHIVE_NAME} ({ARCHIVE_SHA256[:12]}…)")
        if src.resolve() != dest.resolve():
            part = dest.with_suffix(".part")
            shutil.copyfile(src, part)
            os.replace(part, dest)
        return dest
    if dest.exists() and sha256_file(dest) == ARCHIVE_SHA256:
        return dest
    _pip_download(dest)
    if sha256_file(dest) != ARCHIVE_SHA256:
        dest.unlink()
        raise DataError(f"downloaded {ARCHIVE_NAME} has the wrong sha256; refusing it")
    return dest


def corpus_dir(cache_dir: Path | None = None, archive: str | Path | None = None) -> Path:
    """Folder holding the four ground-truth files, extracted once (atomically) from the archive."""
    root = Path(cache_dir or default_cache_dir()) / "vader"
    out = root / "hutto_ICWSM_2014"
    if all((out / name).exists() for name in CORPORA.values()):
        return out
    src = fetch_archive(cache_dir, archive)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
    with tarfile.open(src) as outer:
        inner_bytes = outer.extractfile(INNER_ARCHIVE).read()
    with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner:
        for name in CORPORA.values():
            member = inner.extractfile(f"hutto_ICWSM_2014/{name}")
            (tmp / name).write_bytes(member.read())
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return out


def read_ground_truth(path: Path) -> list[RawExample]:
    """Parse one ``*_GroundTruth.txt`` file: ``id<TAB>score<TAB>text`` (HTML entities unescaped)."""
    out = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            raise DataError(f"{path}:{number}: expected 'id<TAB>score<TAB>text'")
        try:
            score = float(parts[1])
        except ValueError:
            raise DataError(f"{path}:{number}: score '{parts[1]}' is not a number") from None
        out.append(RawExample(html.unescape("\t".join(parts[2:])), score, f"{path.name}:{number}"))
    return out


def load_builtin(name: str, cache_dir: Path | None = None, archive: str | Path | None = None) -> list[RawExample]:
    """Raw examples of a built-in dataset (``vader-movies``, ``vader-nyt``, ``vader-amazon``, ``vader-tweets``)."""
    if name not in CORPORA:
        raise DataError(f"unknown built-in dataset '{name}'; choose one of {sorted(CORPORA)}")
    return read_ground_truth(corpus_dir(cache_dir, archive) / CORPORA[name])
