"""The syntax bias inside a pre-trained Hugging Face encoder: with a zero table it is the model itself, the bias
reaches only the biased layers, subwords take their word's distances, padding stays finite, and a batch
longer than the positions is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from parserfree.encoder import BiasConfig, EncoderConfig, key_padding_bias
from parserfree.encoder.architecture import PretrainedModelError
from parserfree.encoder.pretrained import PretrainedEncoder
from parserfree.encoder.subwords import SubwordVocabulary

from tiny_models import tiny_bert_folder

SENTENCES = [["The", "keys", "to", "the", "cabinets", "are", "here", "."], ["Dogs", "run"]]  # two lengths: padding


def encoder_of(folder, predictor_layer=1, bias_all_layers=False, **bias):
    """A PretrainedEncoder of a folder with its weights, its vocabulary, and the folder's model itself."""
    from transformers import AutoModel

    architecture = json.loads((folder / "config.json").read_text())
    config = EncoderConfig(
        pretrained=str(folder),
        architecture=architecture,
        predictor_layer=predictor_layer,
        bias_all_layers=bias_all_layers,
        n_heads=2,
        d_model=16,
        bias=BiasConfig(**bias),
    )
    encoder = PretrainedEncoder(config)
    encoder.load_pretrained(str(folder))
    vocab = SubwordVocabulary.from_file(folder / "tokenizer.json", 64)
    reference = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    return encoder.eval(), vocab, reference


def batch(vocab, sentences=SENTENCES, max_len=32):
    return tuple(torch.from_numpy(a) for a in vocab.encode_batch(sentences, max_len))


def chain(mask: torch.Tensor) -> torch.Tensor:
    """|i − j| on real word pairs, −1 on pairs touching padding (B×W×W)."""
    i = torch.arange(mask.shape[1])
    d = (i[:, None] - i[None, :]).abs().expand(mask.shape[0], -1, -1)
    return torch.where(mask[:, :, None] & mask[:, None, :], d, torch.full_like(d, -1))


@pytest.mark.parametrize("model_type", ["bert", "roberta", "distilbert"])
def test_a_zero_bias_table_gives_the_pretrained_models_own_states(tmp_path, model_type):
    """Catches a layer skipped, run twice or fed the wrong mask: with the zero-initialised table the biased
    stack reproduces the model's own last hidden states on every real subword of a padded batch."""
    encoder, vocab, reference = encoder_of(tiny_bert_folder(tmp_path / model_type, model_type))
    ids, features, mask = batch(vocab)
    positions = encoder.position_mask(ids, features, mask)
    with torch.no_grad():
        h_0 = encoder.embed(ids, features)
        h_k = encoder.lower_from(h_0, positions)
        ours = encoder.upper(h_0, h_k, positions, encoder.position_distances(chain(mask), features))
        theirs = reference(input_ids=ids, attention_mask=positions.long()).last_hidden_state
    assert positions.sum() > mask.sum()  # special tokens and word pieces: more positions than words
    assert torch.allclose(ours[positions], theirs[positions], atol=1e-5)


def test_the_bias_reaches_only_the_layers_after_k(tmp_path):
    """Layers 1..k (the predictor's input) must not read the bias; the later ones must."""
    encoder, vocab, reference = encoder_of(tiny_bert_folder(tmp_path / "m", layers=3), predictor_layer=1)
    with torch.no_grad():
        encoder.bias.table.weight.copy_(torch.linspace(2.0, -2.0, encoder.bias.table.weight.shape[0])[:, None])
    ids, features, mask = batch(vocab)
    positions = encoder.position_mask(ids, features, mask)
    with torch.no_grad():
        h_0 = encoder.embed(ids, features)
        h_k = encoder.lower_from(h_0, positions)
        hidden = reference(input_ids=ids, attention_mask=positions.long(), output_hidden_states=True).hidden_states
        biased = encoder.upper(h_0, h_k, positions, encoder.position_distances(chain(mask), features))
        plain = encoder.upper(h_0, h_k, positions, None)
    assert torch.allclose(h_k[positions], hidden[1][positions], atol=1e-5)  # layer 1 as the model runs it
    assert torch.allclose(plain[positions], hidden[-1][positions], atol=1e-5)
    assert (biased[positions] - plain[positions]).abs().max() > 1e-3  # the bias changed layers 2-3


def test_per_layer_tables_reach_each_biased_layer_of_the_pretrained_model_in_order(tmp_path):
    """Layers 2 and 3 each add their own table's bias (not both tables as two heads in every layer)."""
    folder = tiny_bert_folder(tmp_path / "m", layers=3)
    encoder, vocab, _ = encoder_of(folder, predictor_layer=1, per_layer=True)
    assert encoder.bias.table.weight.shape == (11, 2)
    with torch.no_grad():
        encoder.bias.table.weight.copy_(torch.stack([torch.linspace(2, -2, 11), torch.linspace(-3, 3, 11)], 1))
    ids, features, mask = batch(vocab)
    positions = encoder.position_mask(ids, features, mask)
    with torch.no_grad():
        h_0 = encoder.embed(ids, features)
        h_k = encoder.lower_from(h_0, positions)
        d = encoder.position_distances(chain(mask), features)
        ours = encoder.upper(h_0, h_k, positions, d)
        h, table = h_k, encoder.bias.table.weight * encoder.bias.scale
        for i, layer in enumerate(encoder.layers[1:]):
            values = torch.where(d >= 0, table[d.clamp(0, 10), i], torch.zeros(()))
            out = layer(h, attention_mask=values[:, None] + key_padding_bias(positions))
            h = out[0] if isinstance(out, tuple) else out
    assert torch.allclose(ours[positions], h[positions], atol=1e-5)


def test_subwords_take_their_words_distances_and_special_tokens_none(tmp_path):
    """Brute force: subword (i, j) reads d(word(i), word(j)); pairs with a special token or padding read −1."""
    encoder, vocab, _ = encoder_of(tiny_bert_folder(tmp_path / "m"))
    ids, features, mask = batch(vocab)
    words = torch.randint(0, 9, (2, mask.shape[1], mask.shape[1]))
    spread = encoder.position_distances(words, features)
    index = features[..., 0]
    for b in range(2):
        for i in range(ids.shape[1]):
            for j in range(ids.shape[1]):
                wi, wj = int(index[b, i]), int(index[b, j])
                expected = -1 if wi < 0 or wj < 0 else int(words[b, wi, wj])
                assert int(spread[b, i, j]) == expected


def test_word_states_are_the_mean_of_each_words_subwords(tmp_path):
    encoder, vocab, _ = encoder_of(tiny_bert_folder(tmp_path / "m"))
    ids, features, mask = batch(vocab, [["cabinets", "x"]])
    h = torch.randn(1, ids.shape[1], 16)
    words = encoder.word_states(h, features, mask)
    index = features[0, :, 0]
    for w in range(2):
        assert torch.allclose(words[0, w], h[0, index == w].mean(0), atol=1e-6)
    assert int((index == 0).sum()) > 1  # "cabinets" is several pieces: the mean is not one of them


def test_padding_and_an_all_padding_row_never_yield_nan(tmp_path):
    encoder, vocab, _ = encoder_of(tiny_bert_folder(tmp_path / "m"))
    with torch.no_grad():
        encoder.bias.table.weight.fill_(50.0)  # a large bias everywhere
    ids, features, mask = batch(vocab, [["The", "dog"], []])  # the second sentence has no word at all
    positions = encoder.position_mask(ids, features, mask)
    with torch.no_grad():
        h_0 = encoder.embed(ids, features)
        out = encoder.upper(
            h_0, encoder.lower_from(h_0, positions), positions, encoder.position_distances(chain(mask), features)
        )
        words = encoder.word_states(out, features, mask)
    assert torch.isfinite(out).all() and torch.isfinite(words).all()
    assert not mask[1].any() and np.allclose(words[1].numpy(), 0.0)


def test_a_batch_longer_than_the_positions_is_refused_in_one_line(tmp_path):
    encoder, _, _ = encoder_of(tiny_bert_folder(tmp_path / "m", positions=16))
    ids = torch.ones(1, 40, dtype=torch.long)
    with pytest.raises(PretrainedModelError, match="a batch of 40 subwords is longer than the encoder's 16 positions"):
        encoder.embed(ids, torch.zeros(1, 40, 1, dtype=torch.long))


def test_an_unknown_model_type_is_refused_in_one_line():
    with pytest.raises(PretrainedModelError, match="model_type 'gpt2' is not supported"):
        PretrainedEncoder(EncoderConfig(pretrained="x", architecture={"model_type": "gpt2"}))
