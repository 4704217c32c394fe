"""parserfree encoder: a Transformer whose self-attention receives an additive dependency-distance bias.

Plain PyTorch, exportable to ONNX: words become ids and hashed features (`Vocabulary`), and an `Encoder`
(`model.py`: the project's `SyntaxEncoder`; `pretrained.py`: a Hugging Face model) runs k unbiased layers
(h_k, read by the distance predictor) and the layers biased by tree distances through `SyntaxBias`.
`EncoderConfig`/`BiasConfig` hold the validated settings. The lowest layer also holds what
every layer shares: the distance conventions (`conventions`), atomic writes and hashes (`files`).
Names are imported on first use (`lazy`), so the vocabulary and the helpers load without PyTorch.
"""

from typing import TYPE_CHECKING

from .lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, written once: editors read them here, run time imports each on first use
    from .config import BIAS_MODES, BiasConfig, EncoderConfig
    from .distance_bias import MASK_VALUE, SyntaxBias, key_padding_bias
    from .model import BiasedSelfAttention, Encoder, EncoderLayer, SyntaxEncoder
    from .pretrained import PretrainedEncoder, build_encoder
    from .vocabulary import PAD, PAD_ID, UNK, UNK_ID, Vocabulary, word_shape

_WHERE = type_checking_exports(__file__)
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
