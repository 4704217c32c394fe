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


POSITIVE = ["great", "wonderful", "moving", "funny", "brilliant", "charming", "smart", "beautiful"]
NEGATIVE = ["dull", "awful", "boring", "clumsy", "tedious", "lifeless", "stupid", "ugly"]
SUBJECTS = ["the film", "this movie", "the story", "her performance", "the script", "the ending", "the cast", "his direction"]
FRAMES = [
    "{s} is {a} .",
    "{s} was really {a} , and i told my friends .",
    "honestly , {s} felt {a} from start to finish .",
    "i thought that {s} was {a} .",
    "{s} is {a} but the music is loud .",
    "what a {a} surprise {s} turned out to be !",
]


def write_sentiment_file(path, n: int = 480) -> None:
    """A small labelled JSONL of template movie sentences (score > 0 positive, < 0 negative)."""
    import json
    import random

    rng = random.Random(7)
    with open(path, "w") as fh:
        for i in range(n):
            positive = i % 2 == 0
            adj = rng.choice(POSITIVE if positive else NEGATIVE)
            text = rng.choice(FRAMES).format(s=rng.choice(SUBJECTS), a=adj)
            text = f"{text} ({i})" if i % 5 == 0 else text
            fh.write(json.dumps({"text": text.capitalize(), "label": round(rng.uniform(0.5, 3.0), 2) * (1 if positive else -1)}) + "\n")


@pytest.fixture(scope="session")
def sentiment_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "sentiment.jsonl"
    write_sentiment_file(path)
    return path


@pytest.fixture(scope="session")
def smoke_overrides(sentiment_file, tmp_path_factory):
    """--set overrides that point configs/smoke.yaml at the fixture data and a private cache."""
    cache = tmp_path_factory.mktemp("cache")
    return [f"data.dataset={sentiment_file}", f"data.cache_dir={cache}"]


@pytest.fixture(scope="session")
def smoke_run(smoke_overrides, tmp_path_factory):
    """One trained smoke run (parser_free) shared by the tests that need a checkpoint."""
    from distill.config import load_config
    from distill.train import train

    out = tmp_path_factory.mktemp("runs") / "smoke"
    config = load_config("configs/smoke.yaml", smoke_overrides)
    metrics = train(config, out, progress=False)
    return out, metrics
