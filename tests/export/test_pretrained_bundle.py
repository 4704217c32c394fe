"""A pre-trained encoder end to end: trained with the syntax bias, its checkpoint rebuilt without the model
folder, exported to one graph whose outputs are PyTorch's, served by ParserFreeModel and the spaCy component,
and the settings it cannot take refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.distill.config import load_config
from parserfree.encoder.schema import ConfigError
from parserfree.export import ParserFreeModel
from parserfree.jobs.exporting import export_checkpoint

TEXTS = ["The movie was great.", "Honestly, the ending felt awful and boring!", "", "Dogs run. The cat is here."]


def test_a_pretrained_checkpoint_rebuilds_without_its_folder(bert_run):
    """The checkpoint keeps the architecture and the tokenizer: moving the folder away loses nothing."""
    run, folder = bert_run
    trained = load_trained(run / "checkpoints" / "best.ckpt")
    assert trained.encoder_config.architecture["model_type"] == "bert" and trained.encoder_config.d_model == 16
    assert trained.encoder_config.n_layers == 3 and trained.encoder_config.pretrained == str(folder)
    assert not folder.exists()  # the fixture moved it away before anything was loaded here


def test_the_graph_is_pytorch_at_other_shapes_and_serves_without_a_parser(bert_run, tmp_path):
    run, _ = bert_run
    manifest = export_checkpoint(run / "checkpoints" / "best.ckpt", tmp_path / "bundle", threads=1)
    assert manifest["parity"]["default"]["task_output_max_diff"] <= 1e-4
    assert manifest["tree_graph"]["parity"]["default"]["heads_differing"] == 0
    assert [i["shape"][1] for i in manifest["inputs"]] == ["subwords", "subwords", "length"]
    model = ParserFreeModel.load(tmp_path / "bundle", threads=1)
    got = model.predict(TEXTS, with_tree=True)
    trained = load_trained(run / "checkpoints" / "best.ckpt")
    assert got[2] == {"error": "empty text"}
    got, words = [g for g in got if "words" in g], [w for w in model.tokenize(TEXTS) if w]
    batch = [torch.from_numpy(a) for a in trained.vocab.encode_batch(words, trained.encoder_config.max_len)]
    with torch.no_grad():
        logits = trained.model(*batch, source="predicted").task
    reference = torch.softmax(logits, -1).numpy()
    served = np.array([[r["probabilities"][n] for n in trained.label_names] for r in got])
    assert np.abs(served - reference).max() < 1e-4
    assert [len(g["heads"]) for g in got] == [len(w) for w in words] == [len(g["words"]) for g in got]


def test_the_spacy_component_serves_a_pretrained_bundle(bert_run, tmp_path):
    import spacy

    run, _ = bert_run
    export_checkpoint(run / "checkpoints" / "best.ckpt", tmp_path / "bundle", threads=1)
    nlp = spacy.blank("en")
    nlp.add_pipe("parserfree", config={"bundle": str(tmp_path / "bundle")})
    doc = nlp("The movie was great. Dogs run.")
    assert set(doc.cats) == {"negative", "positive"} and all(t.head.i < len(doc) for t in doc)
    assert len(list(doc.sents)) >= 1


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("encoder.ngram_buckets=1024", "encoder.ngram_buckets=1024 reads the project's word vocabulary"),
        ("predictor.tower_layers=2", "a parser tower embeds the project's word vocabulary"),
        ("training.init_predictor_from=builtin:parser-tower-en", "parser-tower-en: it gives a parser tower"),
        ("data.task=masked_lm", "data.task=masked_lm pre-trains the project's own encoder"),
    ],
)
def test_settings_a_pretrained_encoder_cannot_take_are_refused_in_one_line(setting, message):
    with pytest.raises(ConfigError, match=message):
        load_config("configs/smoke.yaml", ["encoder.pretrained=some/folder", setting])


def test_a_missing_model_folder_stops_training_in_one_line(smoke_overrides, tmp_path):
    from parserfree.distill.train import train
    from parserfree.encoder.architecture import PretrainedModelError

    config = load_config("configs/smoke.yaml", [*smoke_overrides, f"encoder.pretrained={tmp_path / 'gone'}"])
    with pytest.raises(PretrainedModelError, match="no such model folder"):
        train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "checkpoints").exists()
