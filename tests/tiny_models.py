"""Small models for tests, written once: an encoder config whose every field a test may change by name.

The defaults are the smallest encoder the tests share: 2 layers of width 16 with 2 heads, a 40-word
vocabulary, 16 positions, the predictor on h_1, and the bias on layer 2 only (``bias_all_layers`` off, so
the unbiased and biased layers can be told apart), no dropout.
"""

from __future__ import annotations

import lightning as L

from parserfree.encoder import EncoderConfig

TINY = {
    "vocab_size": 40,
    "n_feature_buckets": 32,
    "d_model": 16,
    "n_heads": 2,
    "n_layers": 2,
    "d_ff": 32,
    "dropout": 0.0,
    "max_len": 16,
    "predictor_layer": 1,
    "bias_all_layers": False,
}


def tiny_encoder(**changes) -> EncoderConfig:
    """``EncoderConfig`` of the tiny defaults with ``changes`` (any of its fields) applied."""
    return EncoderConfig(**{**TINY, **changes})


# A WordPiece vocabulary for tiny pre-trained encoders: the specials, letters (alone and as word pieces),
# punctuation and the fixture sentences' words, so a test sentence splits into real pieces, not [UNK].
WORDPIECE_WORDS = (
    "the movie film plot story music acting cast ending was is felt turned out to be really and i told my "
    "friends honestly from start finish thought that what a surprise but loud great good wonderful superb "
    "lovely awful bad boring dull terrible keys cabinet are here dog cat runs"
).split()


def tiny_bert_folder(folder, model_type: str = "bert", layers: int = 3, positions: int = 64):
    """A pre-trained-encoder folder as Hugging Face writes one (config.json, model.safetensors,
    tokenizer.json) with random weights: width 16, 2 heads, ``layers`` layers, ``positions`` positions."""
    import string
    from pathlib import Path

    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from transformers import AutoConfig, AutoModel

    folder = Path(folder)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = list(string.ascii_lowercase) + [f"##{c}" for c in string.ascii_lowercase + string.digits]
    pieces += list(string.digits + string.punctuation)
    vocab = {t: i for i, t in enumerate(dict.fromkeys(specials + pieces + list(WORDPIECE_WORDS)))}
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    sizes = {
        "bert": {"hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": layers, "intermediate_size": 32},
        "distilbert": {"dim": 16, "n_heads": 2, "n_layers": layers, "hidden_dim": 32},
    }
    sizes["roberta"] = sizes["bert"]
    extra = {"pad_token_id": 0, "max_position_embeddings": positions + (2 if model_type == "roberta" else 0)}
    config = AutoConfig.for_model(model_type, vocab_size=len(vocab), **sizes[model_type], **extra)
    folder.mkdir(parents=True, exist_ok=True)
    AutoModel.from_config(config).save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


class StartWeights(L.Callback):
    """Keeps a copy of the model's weights as training starts (after any init_from, before any step)."""

    def on_train_start(self, trainer, pl_module):
        self.state = {k: v.detach().clone() for k, v in pl_module.model.state_dict().items()}
