"""Vocabulary and featurisation: the parser's words → word ids and hashed sub-word feature ids.

This is the entry of the encoder in the data flow: the words the tokenizer (or the parser) produced
become a B×T matrix of word ids, a B×T×F matrix of hashed feature ids and a B×T mask, the three inputs
of `SyntaxEncoder`. Word ids come from a frequency-cut vocabulary (``<pad>`` = 0, ``<unk>`` = 1, then
words by falling count, ties broken alphabetically, so a rebuild gives the same ids). Every word also
gets F = 3 features — lowercase prefix of 3, lowercase suffix of 3 and the word shape (``Xxxx``, ``dd``)
— hashed with CRC32 into ``n_feature_buckets`` buckets (0 is reserved for padding), so two unknown words
still get different vectors. Each word type is featurised once and remembered (a bounded per-vocabulary
cache), so batches cost a dictionary look-up per word. The vocabulary is saved as a versioned JSON file.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .files import checked_version, write_json
from .subwords import FORMAT as SUBWORD_FORMAT
from .subwords import SubwordVocabulary

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1
FEATURES = ("prefix3", "suffix3", "shape")
FORMAT = "parserfree-vocabulary"
VERSION = 1
CACHE_SIZE = 200_000  # word types whose ids are remembered; the cache starts over when full


def word_shape(word: str) -> str:
    """spaCy-style shape: upper → X, lower → x, digit → d, others kept; runs capped at 4 ("Xxxxx")."""
    if len(word) >= 100:
        return "LONG"
    shape: list[str] = []
    last, run = "", 0
    for char in word:
        if char.isalpha():
            kind = "X" if char.isupper() else "x"
        elif char.isdigit():
            kind = "d"
        else:
            kind = char
        run = run + 1 if kind == last else 0
        last = kind
        if run < 4:
            shape.append(kind)
    return "".join(shape)


def feature_strings(word: str) -> tuple[str, ...]:
    """The F sub-word features of one word, each tagged with its kind so kinds never share a bucket key."""
    lower = word.lower()
    return (f"p:{lower[:3]}", f"s:{lower[-3:]}", f"w:{word_shape(word)}")


def hash_feature(feature: str, n_buckets: int) -> int:
    """Stable bucket of a feature string in 1..n_buckets−1 (CRC32; id 0 is padding)."""
    return zlib.crc32(feature.encode("utf-8")) % (n_buckets - 1) + 1


class Vocabulary:
    """Word ids (frequency-cut) plus hashed sub-word features; see the module docstring."""

    n_features: int = len(FEATURES)

    def __init__(self, words: Sequence[str], n_feature_buckets: int = 4096, lowercase: bool = True) -> None:
        """`words` are the regular entries in id order (ids 2, 3, …); the specials come first implicitly."""
        if n_feature_buckets < 2:
            raise ValueError(f"n_feature_buckets={n_feature_buckets} must be ≥ 2 (bucket 0 is padding)")
        self.words: list[str] = [PAD, UNK, *words]
        self.n_feature_buckets = n_feature_buckets
        self.lowercase = lowercase
        self._index = {w: i for i, w in enumerate(self.words) if i > UNK_ID}
        if len(self._index) != len(words) or PAD in self._index or UNK in self._index:
            raise ValueError("vocabulary words must be unique and must not include <pad> or <unk>")
        self._ids: dict[str, tuple[int, ...]] = {}  # word → (word id, F feature ids)

    @classmethod
    def build(
        cls,
        sentences: Iterable[Sequence[str]],
        min_freq: int = 1,
        max_size: int | None = None,
        n_feature_buckets: int = 4096,
        lowercase: bool = True,
    ) -> Vocabulary:
        """Count words; keep those seen ≥ min_freq times, most frequent first (ties alphabetical),
        at most max_size entries in total including ``<pad>`` and ``<unk>``."""
        if min_freq < 1:
            raise ValueError(f"min_freq={min_freq} must be ≥ 1")
        if max_size is not None and max_size < 2:
            raise ValueError(f"max_size={max_size} must be ≥ 2 (room for <pad> and <unk>)")
        counts: Counter[str] = Counter()
        for sentence in sentences:
            counts.update(w.lower() if lowercase else w for w in sentence)
        for special in (PAD, UNK):
            counts.pop(special, None)
        kept = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        if max_size is not None:
            kept = kept[: max_size - 2]
        return cls(kept, n_feature_buckets=n_feature_buckets, lowercase=lowercase)

    def __len__(self) -> int:
        return len(self.words)

    def word_id(self, word: str) -> int:
        """Id of one word, ``<unk>`` (1) when it is not in the vocabulary."""
        return self._index.get(word.lower() if self.lowercase else word, UNK_ID)

    def features(self, word: str) -> list[int]:
        """The F hashed feature ids of one word (each in 1..n_feature_buckets−1)."""
        return [hash_feature(f, self.n_feature_buckets) for f in feature_strings(word)]

    def ids(self, word: str) -> tuple[int, ...]:
        """(word id, F feature ids) of one word, computed once per word type (bounded cache)."""
        entry = self._ids.get(word)
        if entry is None:
            if len(self._ids) >= CACHE_SIZE:
                self._ids.clear()
            entry = self._ids[word] = (self.word_id(word), *self.features(word))
        return entry

    def encode(self, words: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        """One sentence → (word ids, per-word feature ids), unpadded."""
        entries = [self.ids(w) for w in words]
        return [e[0] for e in entries], [list(e[1:]) for e in entries]

    def encode_batch(self, batch: Sequence[Sequence[str]], max_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pad a batch to its longest sentence (at most max_len; longer ones are truncated with a warning).

        Returns word_ids B×T int64, feature_ids B×T×F int64 (0 at pads), mask B×T bool (True = real word).
        T ≥ 1, so an empty sentence becomes an all-pad row.
        """
        if max_len < 1:
            raise ValueError(f"max_len={max_len} must be ≥ 1")
        lengths = [len(words) for words in batch]
        too_long = [(i, n) for i, n in enumerate(lengths) if n > max_len]
        if too_long:
            listed = ", ".join(f"#{i}: {n} words" for i, n in too_long)
            warnings.warn(
                f"{len(too_long)} of {len(batch)} inputs longer than max_len={max_len} were truncated ({listed})",
                stacklevel=2,
            )
        width = max(1, min(max_len, max(lengths, default=0)))
        kept = np.minimum(lengths, max_len) if lengths else np.zeros(0, dtype=np.int64)
        mask = np.arange(width) < np.asarray(kept).reshape(-1, 1)  # B×T
        entries = [self.ids(w) for words in batch for w in list(words)[:max_len]]
        columns = 1 + self.n_features
        ids = np.zeros((len(batch), width, columns), dtype=np.int64)  # B×T×(1+F)
        if entries:  # row-major order of the mask = the words in order; one flat read, not one tuple at a time
            flat = np.fromiter(itertools.chain.from_iterable(entries), dtype=np.int64, count=len(entries) * columns)
            ids[mask] = flat.reshape(-1, columns)
        return np.ascontiguousarray(ids[..., 0]), np.ascontiguousarray(ids[..., 1:]), mask

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "features": list(FEATURES),
            "hash": "crc32",
            "n_feature_buckets": self.n_feature_buckets,
            "lowercase": self.lowercase,
            "words": self.words[UNK_ID + 1 :],
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the vocabulary as one-line JSON, atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, self.to_dict(), indent=None)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocabulary:
        """Read a vocabulary written by `save`; refuse another format or a newer version."""
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict, source: str = "vocabulary") -> Vocabulary:
        """Rebuild from `to_dict` output (e.g. stored in a checkpoint); refuse another format or a newer version."""
        path = source
        checked_version(
            data, path, format=FORMAT, what="vocabulary file", version_field="version", newest=VERSION, error=ValueError
        )
        if data.get("features") != list(FEATURES) or data.get("hash") != "crc32":
            raise ValueError(
                f"{path} uses features {data.get('features')} / hash {data.get('hash')}, "
                f"expected {list(FEATURES)} / crc32"
            )
        return cls(data["words"], n_feature_buckets=data["n_feature_buckets"], lowercase=data["lowercase"])


AnyVocabulary = Vocabulary | SubwordVocabulary  # what an encoder reads: both give encode_batch(words, max_len)


def word_vocabulary(vocab: AnyVocabulary, what: str) -> Vocabulary:
    """``vocab`` as the project's word vocabulary, for ``what`` (a step that reads word ids); a pre-trained
    encoder's subword vocabulary is refused in one line."""
    if not isinstance(vocab, Vocabulary):
        raise ValueError(
            f"{what} reads the project's word vocabulary; a pre-trained encoder's subwords cannot serve it"
        )
    return vocab


def vocabulary_from_dict(data: dict, source: str = "vocabulary") -> AnyVocabulary:
    """A vocabulary as ``to_dict`` wrote it: the project's word vocabulary, or a pre-trained encoder's
    subword one (``encoder/subwords.py``), told apart by its format."""
    if isinstance(data, dict) and data.get("format") == SUBWORD_FORMAT:
        return SubwordVocabulary.from_dict(data, source=source)
    return Vocabulary.from_dict(data, source=source)


def load_vocabulary(path: str | os.PathLike) -> AnyVocabulary:
    """Read a vocabulary file written by either kind's ``save``."""
    with open(path, encoding="utf-8") as f:
        return vocabulary_from_dict(json.load(f), source=str(path))
