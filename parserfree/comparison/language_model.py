"""The language-model comparison: masked-word perplexity of the pre-trained rows paired by sentence, and
agreement minimal pairs judged zero-shot.

The rows are the masked-LM runs of ``configs/main/language_model.yaml`` (one folder per recipe under a
runs folder), plus ``parser_free``: the parser-fed twin's weights read with its own predictor's D̂ (the
predictor reads the masked sentence, so no parser runs) and, when asked for, ``parser_free_text``: the twin's
weights with its predictor's D̂ of the unmasked sentence, the text the twin's parser reads (so its place
measures the parser's replacement alone, not what the tree tells of the hidden words) and, for each
placeholder asked for, ``twin_masked_parse(P)``: the twin reading spaCy's tree of each sentence with its
hidden words replaced by P — spaCy reading what the encoder and ``parser_free``'s predictor read. Every row is scored on the same hidden words of
the same held-out sentences (``distill.masked_lm``: a fixed choice per sentence), so the difference of two
rows' mean NLL per hidden word is a sum over sentences of paired differences: its interval resamples
sentences, its p is the sign-flip test over the per-sentence NLL differences (``paired.sign_flip``); the
perplexity difference and its interval follow from the same draws. ``parser_free``'s place between its twin
and no_syntax is (ppl_free − ppl_twin) / (ppl_none − ppl_twin), with its interval.

Zero-shot agreement, judged by the same rows on minimal pairs, is ``comparison.zero_shot``; the rows
themselves are ``comparison.lm_rows``, the report and its Markdown ``reports.language_model``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader

from ..core.checkpoints import TrainedModel
from ..distill.config import ExperimentConfig
from ..distill.data_module import SyntaxDataModule, collate
from ..distill.evaluate import update_distance_metrics
from ..distill.masked_lm import WordScores, masked_word_scores, read_hidden, sentence_scores, with_hidden
from ..encoder.masked_words import MASKED_LM
from ..predictor import DistanceMetrics
from ..predictor.distance_predictor import PredictorOutput
from ..predictor.sources import DistanceSource
from ..predictor.syntax_model import SyntaxModel
from ..reports.language_model import LanguageModelReport, PerplexityContrast
from .lm_rows import (
    BASELINE,
    CONTRASTS,
    MASKED_PARSE,
    READ_FROM_TEXT,
    READ_FROM_TWIN,
    REFERENCE,
    reads_prediction,
    row_data,
    row_models,
    source_of,
)
from .paired import RESAMPLES, holm, sign_flip, verdict
from .zero_shot import zero_shot


def perplexity_scores(
    rows: dict[str, tuple[TrainedModel, ExperimentConfig]], data: dict[str, SyntaxDataModule]
) -> tuple[dict[str, WordScores], dict[str, dict[str, float]]]:
    """Every row's masked-word scores on the held-out sentences of its pre-training data (the test split of
    its ``data``), and, for the rows read with D̂, the scores of the trees they read (``tree_scores``)."""
    out, trees = {}, {}
    for name, (trained, _) in rows.items():
        test, of_text = data[name].loader("test"), name == READ_FROM_TEXT
        out[name] = masked_word_scores(trained.model, test, source_of(name, trained), of_text)
        if reads_prediction(name, trained):
            trees[name] = tree_scores(trained.model, test, of_text)
    return out, trees


@torch.no_grad()
def masked_parse_scores(
    trained: TrainedModel, data: SyntaxDataModule, placeholder: str | None, spacy_model: str, batch_size: int = 64
) -> tuple[WordScores, dict[str, float]]:
    """The twin's masked-word scores on ``data``'s test sentences (in their order) when its biased layers read
    spaCy's tree of each sentence with its hidden words replaced by ``placeholder`` (None: kept), parsed as
    given, a token per word (the encoder sees the hidden words masked, as in every row); and those trees'
    UUAS and UAS (%) against spaCy's trees of the whole sentences."""
    from spacy.tokens import Doc

    from ..core.parse import doc_to_parse, load_pipeline

    nlp = load_pipeline(spacy_model)
    model = trained.model.eval()
    examples = data.splits["test"]
    max_len = trained.encoder_config.max_len
    scores, metrics = WordScores.empty(), DistanceMetrics()
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        batch = collate(chunk, trained.vocab, max_len, MASKED_LM)
        hidden = batch["lm_chosen"].numpy()
        docs = [
            Doc(nlp.vocab, words=[placeholder if hidden[b, i] and placeholder else w for i, w in enumerate(e.words)])
            for b, e in enumerate(chunk)
        ]
        heads = [doc_to_parse(doc).heads for doc in nlp.pipe(docs)]
        reparsed = collate(
            [dataclasses.replace(e, heads=h) for e, h in zip(chunk, heads, strict=True)],
            trained.vocab,
            max_len,
            MASKED_LM,
        )
        fed = {**batch, "distances": reparsed["distances"]}
        states, fed = read_hidden(model, fed, batch["lm_chosen"], DistanceSource.PARSER)
        scores = scores.extend(*sentence_scores(model, states, fed["lm_targets"]))
        their_trees = PredictorOutput(reparsed["distances"].float(), heads=reparsed["heads"])
        update_distance_metrics(metrics, their_trees, batch)
    return scores, {k: float(v) for k, v in metrics.compute().items() if k in ("uuas", "uas")}


@torch.no_grad()
def tree_scores(model: SyntaxModel, loader: DataLoader, tree_of_text: bool = False) -> dict[str, float]:
    """UUAS, UAS and LAS (%) of the predictor's trees against the parser's over a loader's sentences, read
    from the text a row reads: with the fixed hidden words masked, or unmasked (``tree_of_text``)."""
    model.eval()
    metrics = DistanceMetrics()
    for batch in loader:
        fed = batch if tree_of_text else with_hidden(batch, batch["lm_chosen"], batch["lm_chosen"])
        update_distance_metrics(metrics, model.predict(fed["word_ids"], fed["feature_ids"], fed["mask"]), batch)
    return {k: float(v) for k, v in metrics.compute().items() if k in ("uuas", "uas", "las")}


def perplexity_contrast(a: WordScores, b: WordScores, draws: np.ndarray) -> tuple[float, list[float], float]:
    """(perplexity a − b, its 95 % interval over resampled sentences, sign-flip p over sentences)."""
    if not np.array_equal(a.n, b.n):
        raise ValueError("the rows were not scored on the same hidden words")
    boot = resampled_perplexity(a, draws) - resampled_perplexity(b, draws)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return a.perplexity - b.perplexity, [float(lo), float(hi)], sign_flip(a.nll - b.nll)


def resampled_perplexity(scores: WordScores, draws: np.ndarray) -> np.ndarray:
    """A row's perplexity in each bootstrap resample of its sentences (``draws``: resamples × sentences)."""
    return np.exp((draws @ scores.nll) / (draws @ scores.n.astype(float)))


def sentence_draws(n: int, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """Bootstrap weights over n sentences (resamples × n multinomial counts), shared by every contrast."""
    return np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=resamples).astype(float)


def compare_perplexity(
    scores: dict[str, WordScores], predicted: Sequence[str] = (READ_FROM_TWIN,), also: Sequence[tuple[str, str]] = ()
) -> tuple[list[PerplexityContrast], dict[str, list[float]]]:
    """The paired contrasts (Holm over them, ``also`` among them) and, for each row of ``predicted`` (read
    with D̂ or another tree than the parser's), its place from the twin (0) to no_syntax (1) with its
    interval."""
    first = next(iter(scores.values()))
    draws = sentence_draws(len(first.n))
    contrasts = []
    extra = [(name, other) for name in predicted if name != READ_FROM_TWIN for other in (BASELINE, REFERENCE)]
    for a, b in (*CONTRASTS, *extra, *also):
        if a in scores and b in scores:
            diff, ci, p = perplexity_contrast(scores[a], scores[b], draws)
            contrasts.append(PerplexityContrast(a=a, b=b, perplexity_difference=diff, ci95=ci, p=p))
    for c, p_adj in zip(contrasts, holm([c.p for c in contrasts]), strict=True):
        c.p_holm = p_adj
        c.verdict = verdict(-c.perplexity_difference, [-c.ci95[1], -c.ci95[0]], p_adj)  # "ahead" = lower perplexity
    places: dict[str, list[float]] = {}
    gap = scores[BASELINE].perplexity - scores[REFERENCE].perplexity if {REFERENCE, BASELINE} <= set(scores) else 0
    if gap:
        ppl = {k: resampled_perplexity(scores[k], draws) for k in (*predicted, REFERENCE, BASELINE) if k in scores}
        for name in predicted:
            if name in scores:
                boot = (ppl[name] - ppl[REFERENCE]) / (ppl[BASELINE] - ppl[REFERENCE])
                share = (scores[name].perplexity - scores[REFERENCE].perplexity) / gap
                places[name] = [share, *(float(x) for x in np.percentile(boot, [2.5, 97.5]))]
    return contrasts, places


def language_model_report(
    runs: str | Path,
    progress: bool = False,
    pairs: bool = True,
    extra: dict[str, Path] | None = None,
    text_trees: bool = False,
    masked_parse: Sequence[str] = (),
) -> LanguageModelReport:
    """The comparison of the masked-LM runs under ``runs`` and the ``extra`` rows (see the module docstring;
    ``text_trees`` adds the row ``parser_free_text``, each placeholder of ``masked_parse`` a row
    ``twin_masked_parse(P)``, perplexity only)."""
    rows = row_models(runs, extra, text_trees)
    data = row_data(rows, progress)
    scores, trees = perplexity_scores(rows, data)
    predicted = [name for name, (trained, _) in rows.items() if reads_prediction(name, trained)]
    twin, config = rows[REFERENCE]
    for placeholder in masked_parse:
        name = MASKED_PARSE.format(placeholder)
        scores[name], trees[name] = masked_parse_scores(twin, data[REFERENCE], placeholder, config.parse.spacy_model)
        predicted.append(name)
    also = [(READ_FROM_TWIN, MASKED_PARSE.format(placeholder)) for placeholder in masked_parse]
    contrasts, places = compare_perplexity(scores, predicted, also)
    first = next(iter(scores.values()))
    report = LanguageModelReport(
        runs=str(runs),
        sentences=len(first.n),
        hidden_words=int(first.n.sum()),
        perplexity={k: s.perplexity for k, s in scores.items()},
        accuracy={k: s.accuracy for k, s in scores.items()},
        contrasts=contrasts,
        places=places,
        trees=trees,
    )
    if pairs:
        zero_shot(rows, report)
    return report
