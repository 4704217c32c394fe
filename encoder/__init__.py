"""parserfree encoder: a Transformer whose self-attention receives an additive dependency-distance bias.

This package is the model part of the data flow (plain PyTorch, exportable to ONNX): words become ids and
hashed features (`Vocabulary`), `SyntaxEncoder` runs k unbiased layers (h_k, read by the distance
predictor) and N−k layers biased by tree distances through `SyntaxBias`, and `TaskHead` turns h_N into a
prediction. `EncoderConfig`/`BiasConfig` hold the validated settings.
"""

from .attention import BiasedSelfAttention
from .config import BIAS_MODES, BiasConfig, EncoderConfig
from .distance_bias import MASK_VALUE, SyntaxBias, key_padding_bias
from .layer import EncoderLayer
from .model import SyntaxEncoder
from .task_heads import TaskHead, masked_mean
from .vocabulary import PAD, PAD_ID, UNK, UNK_ID, Vocabulary, word_shape

__all__ = [
    "BIAS_MODES",
    "MASK_VALUE",
    "PAD",
    "PAD_ID",
    "UNK",
    "UNK_ID",
    "BiasConfig",
    "BiasedSelfAttention",
    "EncoderConfig",
    "EncoderLayer",
    "SyntaxBias",
    "SyntaxEncoder",
    "TaskHead",
    "Vocabulary",
    "key_padding_bias",
    "masked_mean",
    "word_shape",
]
