"""Shared fixtures: tiny data written here, a deterministic stand-in teacher (no spaCy model needed)."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest
import torch

from parserfree.core.parse import Parse
from parserfree.encoder import BiasConfig, EncoderConfig


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


@pytest.fixture
def awkward_texts() -> dict[str, str]:
    """The awkward inputs of tests/awkward.py, name → text in a fixed order (a fresh copy per test)."""
    from awkward import AWKWARD_TEXTS  # here, not at the top: subprocess tests load this file on its own

    return dict(AWKWARD_TEXTS)


POSITIVE = ["great", "wonderful", "moving", "funny", "brilliant", "charming", "smart", "beautiful"]
NEGATIVE = ["dull", "awful", "boring", "clumsy", "tedious", "lifeless", "stupid", "ugly"]
SUBJECTS = [
    "the film",
    "this movie",
    "the story",
    "her performance",
    "the script",
    "the ending",
    "the cast",
    "his direction",
]
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
            fh.write(
                json.dumps(
                    {"text": text.capitalize(), "label": round(rng.uniform(0.5, 3.0), 2) * (1 if positive else -1)}
                )
                + "\n"
            )


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


TRAINING_FIXTURES = (
    "smoke_run",
    "bert_run",
    "smoke_job",
    "job",
    "treebank_checkpoint",
    "straight",
    "pretraining",
    "lm_runs",
)
"""Fixtures that train a model: every test that uses one (directly or through another fixture, e.g.
``smoke_checkpoint`` or ``smoke_bundle``) is marked ``slow``; tests that train by themselves carry the mark."""


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if set(TRAINING_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def smoke_run(smoke_overrides, tmp_path_factory):
    """One trained smoke run (parser_free) shared by the tests that need a checkpoint."""
    from parserfree.distill.config import load_config
    from parserfree.distill.train import train

    out = tmp_path_factory.mktemp("runs") / "smoke"
    config = load_config("configs/smoke.yaml", smoke_overrides)
    metrics = train(config, out, progress=False)
    return out, metrics


@pytest.fixture(scope="session")
def bert_run(smoke_overrides, tmp_path_factory):
    """(run folder, model folder) of the smoke run on a tiny pre-trained BERT (encoder.pretrained, random
    weights, 3 layers), the model folder moved away once trained: nothing after training may need it."""
    from parserfree.distill.config import load_config
    from parserfree.distill.train import train

    from tiny_models import tiny_bert_folder

    root = tmp_path_factory.mktemp("bert")
    folder = tiny_bert_folder(root / "tiny-bert")
    config = load_config(
        "configs/smoke.yaml", [*smoke_overrides, f"encoder.pretrained={folder}", "encoder.bias_all_layers=false"]
    )
    train(config, root / "run", progress=False)
    folder.rename(root / "moved-away")
    return root / "run", folder


# ---- export fixtures: one bundle of the smoke run (with both variants) per session, and checkpoints of the
# other recipes made from the smoke run's metadata with random weights (no extra training)


@pytest.fixture(scope="session")
def smoke_checkpoint(smoke_run):
    run_dir, _ = smoke_run
    return run_dir / "checkpoints" / "best.ckpt"


@pytest.fixture(scope="session")
def smoke_bundle(smoke_checkpoint, tmp_path_factory):
    """(bundle folder, manifest) of the smoke model, exported once with --optimize and --quantize int8."""
    from parserfree.jobs.exporting import export_checkpoint

    out = tmp_path_factory.mktemp("bundles") / "smoke"
    manifest = export_checkpoint(smoke_checkpoint, out, optimize=True, quantize="int8", threads=1)
    return out, manifest


@pytest.fixture(scope="session")
def bert_bundle(bert_run, tmp_path_factory):
    """The bundle of the tiny pre-trained BERT run (subword tokenizer, the base size's kind of bundle)."""
    from parserfree.jobs.exporting import export_checkpoint

    out = tmp_path_factory.mktemp("bundles") / "bert"
    export_checkpoint(bert_run[0] / "checkpoints" / "best.ckpt", out, threads=1)
    return out


@pytest.fixture
def bundle_copy(smoke_bundle, tmp_path):
    """A private copy of the smoke bundle that a test may damage."""
    target = tmp_path / "bundle"
    shutil.copytree(smoke_bundle[0], target)
    return target


def make_recipe_checkpoint(smoke_checkpoint, recipe: str, task: str, path) -> None:
    """A checkpoint of ``recipe`` (its row's settings and predictor) with the smoke run's vocabulary and data,
    random weights and a random bias table; task ``regression`` turns the smoke data's scores into the target."""
    from parserfree.core.recipes import get_recipe
    from parserfree.encoder import EncoderConfig
    from parserfree.predictor import PredictorConfig
    from parserfree.predictor.syntax_model import SyntaxModel

    row = get_recipe(recipe)
    meta = copy.deepcopy(torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)["parserfree"])
    encoder = dict(meta["encoder"], bias=dict(meta["encoder"]["bias"]))
    for key, value in row.fixed.items():
        *sections, name = key.split(".")[1:]
        (encoder["bias"] if sections else encoder)[name] = value
    predictor = meta["predictor"] if row.predictor else None
    meta.update(encoder=encoder, predictor=predictor, recipe=recipe)
    meta["experiment"]["recipe"] = recipe
    if task == "regression":
        meta.update(task="regression", label_names=[])
        meta["experiment"]["data"]["task"] = "regression"
    model = SyntaxModel(
        EncoderConfig.from_dict(encoder),
        PredictorConfig.from_dict(predictor) if predictor else None,
        meta["task"],
        max(2, len(meta["label_names"])),
        seed=0,
        dep_labels=meta["dep_labels"],
    )
    if model.encoder.bias.table is not None:
        torch.manual_seed(0)
        torch.nn.init.normal_(model.encoder.bias.table.weight, std=1.0)  # a bias that matters
    state = {f"model.{k}": v for k, v in model.state_dict().items()}
    torch.save({"state_dict": state, "parserfree": meta}, path)


@pytest.fixture(scope="session")
def recipe_checkpoint(smoke_checkpoint, tmp_path_factory):
    """(recipe, task) → path of a checkpoint of that recipe and task (made once per session)."""
    made = {}

    def get(recipe: str, task: str = "binary"):
        if (recipe, task) not in made:
            made[recipe, task] = tmp_path_factory.mktemp("ckpt") / f"{recipe}-{task}.ckpt"
            make_recipe_checkpoint(smoke_checkpoint, recipe, task, made[recipe, task])
        return made[recipe, task]

    return get


def write_settings_checkpoint(path, experiment: dict, task: str, recipe: str) -> str:
    """A checkpoint file with a run's settings and no weights, for code that reads what a run was (resuming,
    pairing starts), not its tensors; returns its path."""
    from parserfree.core.checkpoints import CHECKPOINT_FORMAT, META_KEYS

    meta = dict.fromkeys(META_KEYS, None) | {"format": CHECKPOINT_FORMAT, "experiment": experiment}
    torch.save({"parserfree": meta | {"task": task, "recipe": recipe}, "state_dict": {}}, path)
    return str(path)


@pytest.fixture(scope="session")
def settings_checkpoint():
    """``write_settings_checkpoint(path, experiment, task, recipe)``: a checkpoint of settings only."""
    return write_settings_checkpoint


@pytest.fixture(scope="session")
def checkpoint_of_recipe():
    """``make_recipe_checkpoint(source, recipe, task, path)`` for tests that start from a checkpoint of their own."""
    return make_recipe_checkpoint


def patch_tiny_agreement(monkeypatch):
    """Make the built-in agreement dataset a few hundred fixture minimal pairs (no corpora, no tagging)."""
    from agreement_items import candidates

    from parserfree.distill.data import agreement, builtin_text

    items = candidates(n0=160, n1=40, n2=20)
    texts = tuple(builtin_text.SourceText("src", c.sentence) for c in items)
    monkeypatch.setattr(
        agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True, text=None: items
    )
    monkeypatch.setattr(builtin_text, "source_texts", lambda cache_dir, archive, text=None: texts)
    return items


@pytest.fixture
def tiny_agreement(monkeypatch):
    """The built-in agreement dataset made of a few hundred fixture minimal pairs (no corpora, no tagging)."""
    return patch_tiny_agreement(monkeypatch)


@pytest.fixture(scope="module")
def tiny_agreement_module():
    """``tiny_agreement`` for the fixtures of a whole test module."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield patch_tiny_agreement(monkeypatch)


# --- tiny encoders and padded batches with chain-tree distances (tests/encoder, tests/predictor) ---------

TINY_VOCAB, TINY_BUCKETS = 30, 64


def tiny_config(**bias: object) -> EncoderConfig:
    """2 layers, d=16, 2 heads; predictor_layer=1 and bias_all_layers off, so layer 1 runs unbiased and
    layer 2 biased (the split these tests check; not the default, which biases every layer)."""
    from tiny_models import tiny_encoder

    return tiny_encoder(
        vocab_size=TINY_VOCAB, n_feature_buckets=TINY_BUCKETS, dropout=0.1, max_len=12, bias=BiasConfig(**bias)
    )


def make_batch(lengths: list[int], width: int, seed: int = 0):
    """Random ids for sentences of the given lengths, padded to `width`; distances of a chain tree
    (|i − j|) for real pairs, −1 for every pair touching padding. Returns (word_ids, feature_ids, mask, D)."""
    gen = torch.Generator().manual_seed(seed)
    batch = len(lengths)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]  # B×T
    word_ids = torch.randint(2, TINY_VOCAB, (batch, width), generator=gen) * mask
    feature_ids = torch.randint(1, TINY_BUCKETS, (batch, width, 3), generator=gen) * mask[..., None]
    idx = torch.arange(width)
    chain = (idx[:, None] - idx[None, :]).abs().expand(batch, width, width)
    pair = mask[:, :, None] & mask[:, None, :]
    distances = torch.where(pair, chain, torch.full_like(chain, -1))  # B×T×T
    return word_ids, feature_ids, mask, distances


@pytest.fixture
def config_factory():
    return tiny_config


@pytest.fixture
def batch_factory():
    return make_batch
