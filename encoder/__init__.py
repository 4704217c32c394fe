"""parserfree encoder: a Transformer whose self-attention receives an additive dependency-distance bias.

This package is the model part of the data flow (plain PyTorch, exportable to ONNX): words become ids and
hashed features (`Vocabulary`), `SyntaxEncoder` runs k unbiased layers (h_k, read by the distance
predictor) and N−k layers biased by tree distances through `SyntaxBias`, and `TaskHead` turns h_N into a
prediction. `EncoderConfig`/`BiasConfig` hold the validated settings. The lowest layer also holds what
every layer shares: the distance conventions (`conventions`), atomic writes and hashes (`files`).
Names are imported on first use (`lazy`), so the vocabulary and the helpers load without PyTorch.
"""

from parserfree.encoder.lazy import lazy_exports

_WHERE = {
    "BiasedSelfAttention": ".attention",
    "BIAS_MODES": ".config",
    "BiasConfig": ".config",
    "EncoderConfig": ".config",
    "MASK_VALUE": ".distance_bias",
    "SyntaxBias": ".distance_bias",
    "key_padding_bias": ".distance_bias",
    "EncoderLayer": ".layer",
    "SyntaxEncoder": ".model",
    "TaskHead": ".task_heads",
    "masked_mean": ".task_heads",
    "PAD": ".vocabulary",
    "PAD_ID": ".vocabulary",
    "UNK": ".vocabulary",
    "UNK_ID": ".vocabulary",
    "Vocabulary": ".vocabulary",
    "word_shape": ".vocabulary",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
