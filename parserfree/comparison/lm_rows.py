"""The rows of the language-model comparison: which masked-LM runs they are, what each reads, which pairs
are compared.

A row is a masked-LM run of ``configs/main/language_model.yaml`` (a run folder per recipe, or the shipped
encoders ``builtin:<prefix>-<recipe>``) read with one distance source: ``parser_free`` is the twin's
weights with its own D̂, ``parser_free_text`` the same with D̂ of the unmasked sentence. Shared by the
perplexity comparison (``comparison.language_model``) and the zero-shot pairs (``comparison.zero_shot``).
"""

from __future__ import annotations

from pathlib import Path

from ..core.checkpoints import TrainedModel, load_trained
from ..core.recipes import get_recipe
from ..distill.config import ExperimentConfig, config_from_record, load_config
from ..distill.data_module import SyntaxDataModule
from ..distill.shipped import SCHEME, is_shipped, shipped_checkpoint, shipped_names
from ..encoder.vocabulary import word_vocabulary
from ..predictor.sources import DistanceSource

TRAINED_ROWS = ("no_syntax", "locality", "parser_fed_twin")  # one masked-LM run each
READ_FROM_TWIN = "parser_free"  # the twin's weights with its own D̂
READ_FROM_TEXT = "parser_free_text"  # the twin's weights with its own D̂ of the unmasked text (the parser's input)
REFERENCE, BASELINE = "parser_fed_twin", "no_syntax"
MASKED_PARSE = "twin_masked_parse({})"  # the twin reading spaCy's tree of the sentence, hidden words replaced
SOURCES = {
    "no_syntax": DistanceSource.NONE,
    "locality": DistanceSource.SEQUENTIAL,
    "parser_fed_twin": DistanceSource.PARSER,
    "parser_free": DistanceSource.PREDICTED,
    READ_FROM_TEXT: DistanceSource.PREDICTED,
}
CONTRASTS = (
    ("parser_fed_twin", "no_syntax"),
    ("parser_fed_twin", "locality"),
    ("parser_free", "no_syntax"),
    ("parser_free", "parser_fed_twin"),
    ("locality", "no_syntax"),
)


def row_models(
    runs: str | Path, extra: dict[str, Path] | None = None, text_trees: bool = False
) -> dict[str, tuple[TrainedModel, ExperimentConfig]]:
    """Each row's model and config (no_syntax and the twin required, locality if there is one), from the
    run folders ``runs/<recipe>`` or, when ``runs`` is ``builtin:<prefix>``, the shipped encoders
    ``builtin:<prefix>-<recipe>``; ``parser_free`` (and with ``text_trees`` ``parser_free_text``) shares the
    twin's; ``extra``: more rows, name → run folder (read with their recipe's inference source, e.g. a
    parser_free run trained on D̂)."""
    rows = {}
    for recipe in TRAINED_ROWS:
        ref = f"{runs}-{recipe}" if is_shipped(str(runs)) else Path(runs) / recipe
        row = masked_lm_row(ref)
        if row is None and recipe in (REFERENCE, BASELINE):
            raise FileNotFoundError(f"{ref}: no masked-LM run or shipped encoder of {recipe} (docs/language_model.md)")
        if row is not None:  # the locality row is optional
            rows[recipe] = row
    rows[READ_FROM_TWIN] = rows[REFERENCE]
    if text_trees:
        rows[READ_FROM_TEXT] = rows[REFERENCE]
    for name, run in (extra or {}).items():
        row = masked_lm_row(Path(run))
        if row is None:
            raise FileNotFoundError(f"{run}: no finished masked-LM run (no checkpoints/best.ckpt)")
        rows[name] = row
    return rows


def masked_lm_row(ref: str | Path) -> tuple[TrainedModel, ExperimentConfig] | None:
    """A masked-LM model and its config: a run folder's best checkpoint and ``config.yaml``, or a shipped
    encoder (``builtin:<name>``, its sha256 checked) with the config its checkpoint records; None when
    there is no such run or encoder."""
    if is_shipped(str(ref)):
        name = str(ref).removeprefix(SCHEME)
        if name not in shipped_names():
            return None
        trained = load_trained(shipped_checkpoint(name))
        config = config_from_record(trained.experiment)
        config.validate()
        return trained, config
    best = Path(ref) / "checkpoints" / "best.ckpt"
    return (load_trained(best), load_config(Path(ref) / "config.yaml", record=True)) if best.exists() else None


def source_of(name: str, trained: TrainedModel) -> DistanceSource:
    """The distance source a row is read with: its fixed one, else its recipe's inference source."""
    return SOURCES.get(name) or get_recipe(trained.recipe).eval_source


def reads_prediction(name: str, trained: TrainedModel) -> bool:
    """Whether a row is read with the predictor's D̂ (so it has a place between the twin and no_syntax)."""
    return source_of(name, trained) == DistanceSource.PREDICTED


def row_data(
    rows: dict[str, tuple[TrainedModel, ExperimentConfig]], progress: bool = False
) -> dict[str, SyntaxDataModule]:
    """Each row's data (its pre-training text, set up), read once for every row of the same text and
    vocabulary."""
    out: dict[str, SyntaxDataModule] = {}
    data, words = None, None
    for name, (trained, config) in rows.items():
        vocab = word_vocabulary(trained.vocab, f"the language-model row {name}")
        if data is None or words != vocab.words or data.config.data != config.data:
            data, words = SyntaxDataModule(config, None, vocab, progress, trained.dep_labels), vocab.words
            data.setup()
        out[name] = data
    return out
