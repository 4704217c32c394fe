"""Subword vocabulary: the parser's words → a pre-trained encoder's subword ids, and each subword's word.

The entry of a pre-trained encoder (``encoder/pretrained.py``) in the data flow, in the place of
``encoder/vocabulary.py``: the words the tokenizer (or the parser) produced are split by the encoder's own
``tokenizer.json`` (``tokenizers``, pre-tokenized input: a word is never merged with its neighbour), with
the encoder's special tokens around them ([CLS] … [SEP] for BERT, <s> … </s> for RoBERTa). It returns
the same three arrays as ``Vocabulary.encode_batch``, so training, export and serving feed both alike:

- ``word_ids`` B×S int64: the subword ids, the pad id after the text;
- ``feature_ids`` B×S×1 int64: for each subword the index of its word, −1 on special tokens and padding
  (the one "feature" of a subword: which word's distances it takes);
- ``mask`` B×W bool: the words (W, not S: the trees, the predictor and the task head are word-level).

A word the tokenizer's normaliser erases (a control character, a lone accent) gets the unknown token, so
every word has at least one subword. Sentences are cut, with a warning, to ``max_len`` words and then, whole
words at a time, to the encoder's positions (two of them for the special tokens). The vocabulary is saved
as JSON that holds the tokenizer itself, so a checkpoint and a bundle need no model folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import ParserfreeError
from .files import checked_version, write_json

FORMAT = "parserfree-subword-vocabulary"
VERSION = 1
NO_WORD = -1  # the word index of a special token or a padding position


class TokenizerError(ParserfreeError, ValueError):
    """A tokenizer.json that cannot serve a pre-trained encoder (unreadable, no pad or unknown token, or
    another vocabulary than the encoder's)."""


class SubwordVocabulary:
    """A pre-trained encoder's tokenizer over given words; see the module docstring."""

    n_features = 1  # feature_ids hold each subword's word index

    def __init__(self, tokenizer_json: str, max_positions: int, source: str = "tokenizer.json") -> None:
        """``tokenizer_json``: the text of a ``tokenizer.json``; ``max_positions``: the encoder's positions."""
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_str(tokenizer_json)
        except Exception as e:  # noqa: BLE001 — the Rust parser's errors have no common Python type
            raise TokenizerError(f"{source}: not a tokenizers file ({str(e).splitlines()[0][:120]})") from None
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer, self.tokenizer_json, self.source = tokenizer, tokenizer_json, source
        self.max_positions = max_positions
        self.pad_id = self._special(("[PAD]", "<pad>"), "padding")
        self.unk_id = self._special(("[UNK]", "<unk>"), "unknown")
        probe = tokenizer.encode(["a"], is_pretokenized=True)
        first = probe.word_ids.index(0)
        self.prefix = [i for i, w in zip(probe.ids[:first], probe.word_ids[:first]) if w is None]
        self.suffix = [i for i, w in zip(probe.ids, probe.word_ids) if w is None][len(self.prefix) :]
        self.sha256 = hashlib.sha256(tokenizer_json.encode("utf-8")).hexdigest()
        if max_positions <= len(self.prefix) + len(self.suffix):
            raise TokenizerError(f"{source}: {max_positions} positions leave no room for a word")

    def _special(self, names: tuple[str, ...], what: str) -> int:
        for name in names:
            found = self.tokenizer.token_to_id(name)
            if found is not None:
                return int(found)
        raise TokenizerError(f"{self.source}: no {what} token ({' or '.join(names)}); not a BERT-family tokenizer")

    def __len__(self) -> int:
        return int(self.tokenizer.get_vocab_size())

    def pieces(self, words: Sequence[Sequence[str]]) -> list[tuple[list[int], list[int]]]:
        """Per sentence, its subword ids and each one's word index (special tokens excluded; a word the
        normaliser erases gets the unknown token)."""
        out = []
        for words_of, encoding in zip(
            words, self.tokenizer.encode_batch([list(w) for w in words], is_pretokenized=True, add_special_tokens=False)
        ):
            ids, index, seen = [], [], 0
            for token, word in zip(encoding.ids, encoding.word_ids):
                while seen < word:  # words between the last one seen and this one have no subword
                    ids.append(self.unk_id)
                    index.append(seen)
                    seen += 1
                ids.append(token)
                index.append(word)
                seen = word + 1
            for missing in range(seen, len(words_of)):
                ids.append(self.unk_id)
                index.append(missing)
            out.append((ids, index))
        return out

    def encode_batch(self, batch: Sequence[Sequence[str]], max_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pad a batch: subword ids B×S, each subword's word index B×S×1 (−1 on specials and padding) and the
        word mask B×W; words past ``max_len``, then whole words past the encoder's positions, are cut with
        a warning. S ≥ the special tokens, W ≥ 1 (an empty sentence becomes an all-pad word row)."""
        if max_len < 1:
            raise ValueError(f"max_len={max_len} must be ≥ 1")
        too_long = [(i, len(words)) for i, words in enumerate(batch) if len(words) > max_len]
        if too_long:
            listed = ", ".join(f"#{i}: {n} words" for i, n in too_long)
            warnings.warn(
                f"{len(too_long)} of {len(batch)} inputs longer than max_len={max_len} were truncated ({listed})",
                stacklevel=2,
            )
        room = self.max_positions - len(self.prefix) - len(self.suffix)
        pieces, cut = [], []
        for i, (ids, index) in enumerate(self.pieces([list(words)[:max_len] for words in batch])):
            if len(ids) > room:  # whole words only: cut before the first word that does not fit
                keep = index.index(index[room])
                ids, index = ids[:keep], index[:keep]
                cut.append((i, index[-1] + 1 if index else 0))
            pieces.append((ids, index))
        if cut:
            listed = ", ".join(f"#{i}: {w} words kept" for i, w in cut)
            warnings.warn(
                f"{len(cut)} of {len(batch)} inputs longer than the encoder's {self.max_positions} positions "
                f"({room} subwords) were truncated ({listed})",
                stacklevel=2,
            )
        words = [index[-1] + 1 if index else 0 for _, index in pieces]
        width = max(1, max(words, default=0))
        length = len(self.prefix) + len(self.suffix) + max((len(ids) for ids, _ in pieces), default=0)
        token_ids = np.full((len(batch), length), self.pad_id, dtype=np.int64)
        word_index = np.full((len(batch), length), NO_WORD, dtype=np.int64)
        start = len(self.prefix)
        for b, (ids, index) in enumerate(pieces):
            row = [*self.prefix, *ids, *self.suffix]
            token_ids[b, : len(row)] = row
            word_index[b, start : start + len(index)] = index
        mask = np.arange(width) < np.asarray(words, dtype=np.int64).reshape(-1, 1)
        return token_ids, word_index[..., None], mask

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "max_positions": self.max_positions,
            "tokenizer_sha256": self.sha256,
            "tokenizer": self.tokenizer_json,
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the vocabulary (the tokenizer inside) as one-line JSON, atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, self.to_dict(), indent=None)

    @classmethod
    def from_dict(cls, data: dict, source: str = "vocabulary") -> SubwordVocabulary:
        """Rebuild from ``to_dict`` output; refuse another format, a newer version or a changed tokenizer."""
        checked_version(
            data,
            source,
            format=FORMAT,
            what="vocabulary file",
            version_field="version",
            newest=VERSION,
            error=ValueError,
        )
        text = data["tokenizer"]
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != data.get("tokenizer_sha256"):
            raise TokenizerError(f"{source}: its tokenizer does not match its recorded sha256 (damaged)")
        return cls(text, int(data["max_positions"]), source=f"{source} (tokenizer)")

    @classmethod
    def from_file(cls, path: str | os.PathLike, max_positions: int) -> SubwordVocabulary:
        """A model folder's ``tokenizer.json`` for an encoder of ``max_positions`` positions."""
        try:
            text = Path(path).read_text(encoding="utf-8")
            json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TokenizerError(f"{path}: unreadable tokenizer ({type(e).__name__})") from None
        return cls(text, max_positions, source=str(path))
