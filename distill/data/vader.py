"""Built-in data: the VADER sentiment ground-truth corpora (Hutto & Gilbert, ICWSM 2014; MIT licence).

Where the built-in datasets come from. The vaderSentiment 3.3.2 source archive (the wheel lacks the data)
holds ``additional_resources/hutto_ICWSM_2014.tar.gz`` whose ``*_GroundTruth.txt`` files are
tab-separated ``id, mean human sentiment (−4..4), text``. The archive is fetched, verified and extracted
once by ``distill/archives.py`` (pip with the user's own configuration, or ``--archive`` for offline use).
"""

from __future__ import annotations

import html
from pathlib import Path

from .archives import SourceArchive, extract_files, fetch
from .readers import DataError, RawExample, _lines

ARCHIVE = SourceArchive(
    requirement="vaderSentiment==3.3.2",
    filename="vaderSentiment-3.3.2.tar.gz",
    sha256="5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9",
    folder="vader",
)
ARCHIVE_NAME = ARCHIVE.filename
ARCHIVE_SHA256 = ARCHIVE.sha256
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


def fetch_archive(cache_dir: Path | None = None, archive: str | Path | None = None) -> Path:
    """The verified vaderSentiment source archive in the cache: copied from ``archive`` if given, else downloaded once."""
    return fetch(ARCHIVE, cache_dir, archive)


def corpus_dir(cache_dir: Path | None = None, archive: str | Path | None = None) -> Path:
    """Folder holding the four ground-truth files, extracted once (atomically) from the archive."""
    members = {name: f"hutto_ICWSM_2014/{name}" for name in CORPORA.values()}
    return extract_files(ARCHIVE, "hutto_ICWSM_2014", members, cache_dir, archive, inner=INNER_ARCHIVE)


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
