"""Shared fixtures: tiny data written here, a deterministic stand-in teacher (no spaCy model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from distill.teacher import Parse


class ChainTeacher:
    """Stand-in parser: whitespace words, each word headed by the next, the last one the root."""

    def __init__(self) -> None:
        self.parsed = 0

    @property
    def fingerprint(self) -> dict:
        return {"model": "chain", "version": "1", "tokenizer": "split"}

    def parse(self, texts):
        for t in texts:
            self.parsed += 1
            words = tuple(t.split())
            n = len(words)
            heads = np.minimum(np.arange(n) + 1, n - 1)
            yield Parse(words, heads.astype(np.int64), np.array([w in ".,!?" for w in words], dtype=bool))


@pytest.fixture
def chain_teacher() -> ChainTeacher:
    return ChainTeacher()
