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

Zero-shot agreement (no agreement label is ever trained on): for every test minimal pair of the built-in
``agreement`` set, the verb of its singular version is hidden and the row scores the two verb forms
(singular, plural) at that position; it prefers the grammatical version when the form of the subject's
number is the more probable. Every row reads the singular version's words and tree — one choice for all
pairs, made without knowing which version is grammatical, so the tree cannot leak the answer. Pairs whose
two forms are not both vocabulary words are left out (and counted). Rows are compared by the paired
verdicts of ``parserfree.comparison.paired``, overall and on the attractor items.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader

from parserfree.comparison.paired import RESAMPLES, Resampler, holm, paired_test, sign_flip, verdict
from parserfree.core.checkpoints import TrainedModel, load_trained
from parserfree.core.recipes import get_recipe
from parserfree.distill.config import ExperimentConfig, load_config
from parserfree.distill.data_module import SyntaxDataModule, collate
from parserfree.distill.evaluate import update_distance_metrics
from parserfree.distill.masked_lm import WordScores, masked_word_scores, read_hidden, sentence_scores, with_hidden
from parserfree.distill.shipped import SCHEME, is_shipped, shipped_checkpoint, shipped_names
from parserfree.encoder import UNK_ID
from parserfree.encoder.masked_words import MASKED_LM
from parserfree.encoder.schema import build_dataclass
from parserfree.predictor import DistanceMetrics
from parserfree.predictor.head import PredictorOutput
from parserfree.predictor.sources import DistanceSource
from parserfree.predictor.syntax_model import SyntaxModel

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


@dataclass(kw_only=True)
class RowContrast:
    """Row a against row b, paired: the difference's 95 % interval, the sign-flip test's p, its Holm-corrected
    p over the contrasts it is tested with, and the verdict."""

    a: str
    b: str
    ci95: list[float]
    p: float
    p_holm: float = 1.0
    verdict: str = ""


@dataclass(kw_only=True)
class PerplexityContrast(RowContrast):
    """Perplexity on the same hidden words (a − b; lower is better)."""

    perplexity_difference: float


@dataclass(kw_only=True)
class PairContrast(RowContrast):
    """The zero-shot minimal pairs of one slice (points of pairs judged right, a − b)."""

    slice: str
    difference: float
    detectable: float | None


@dataclass(kw_only=True)
class LanguageModelReport:
    """Perplexity and accuracy per row, their paired contrasts, and the zero-shot agreement judgments."""

    runs: str
    sentences: int
    hidden_words: int
    perplexity: dict[str, float]
    accuracy: dict[str, float]
    contrasts: list[PerplexityContrast]
    places: dict[str, list[float]]  # row reading D̂ → [its place from the twin (0) to no_syntax (1), 95 % CI]
    trees: dict[str, dict[str, float]] = field(default_factory=dict)  # row reading D̂ → UUAS, UAS, LAS (%) of
    # the trees it reads against the parser's, on the same sentences
    zero_shot: dict[str, dict[str, float]] = field(default_factory=dict)  # row → slice → percent preferring
    zero_shot_pairs: dict[str, int] = field(default_factory=dict)  # slice → pairs scored
    zero_shot_left_out: int = 0
    zero_shot_contrasts: list[PairContrast] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


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
        config = build_dataclass(ExperimentConfig, trained.experiment)
        config.validate()
        return trained, config
    best = Path(ref) / "checkpoints" / "best.ckpt"
    return (load_trained(best), load_config(Path(ref) / "config.yaml")) if best.exists() else None


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
    data = None
    for name, (trained, config) in rows.items():
        if data is None or data.vocab.words != trained.vocab.words or data.config.data != config.data:
            data = SyntaxDataModule(config, None, trained.vocab, progress, trained.dep_labels)
            data.setup()
        out[name] = data
    return out


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

    from parserfree.core.parse import doc_to_parse, load_pipeline

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


@dataclass(frozen=True)
class MinimalPair:
    """A test minimal pair for zero-shot judgment: the singular version's words and tree, the verb's position,
    its two forms and which is grammatical."""

    example: object  # the singular version's EncodedExample (words, heads)
    verb_index: int
    singular: str
    plural: str
    subject_number: str
    attractors: int


def minimal_pairs(config: ExperimentConfig, trained: TrainedModel) -> tuple[list[MinimalPair], int]:
    """The built-in agreement set's test minimal pairs (same corpora as ``config``) and how many were left out
    (a form outside the vocabulary, or a verb position past the encoder's reach)."""
    agreement = copy.deepcopy(config)
    agreement.data.dataset, agreement.data.task = "agreement", "binary"
    agreement.data.train_fraction, agreement.data.max_examples = 1.0, None
    data = SyntaxDataModule(agreement, None, trained.vocab, False, trained.dep_labels)
    data.setup()
    examples = data.examples("test")
    versions: dict[str, dict[str, tuple]] = {}
    for ex, enc in zip(examples, data.splits["test"], strict=True):
        versions.setdefault(ex.columns["pair_id"], {})[ex.columns["verb_number"]] = (ex, enc)
    pairs, left_out = [], 0
    for both in versions.values():
        if set(both) != {"sg", "pl"}:
            left_out += 1
            continue
        (sg, enc), (pl, _) = both["sg"], both["pl"]
        i = int(sg.columns["verb_index"])
        forms = (sg.columns["verb"], pl.columns["verb"])
        known = all(trained.vocab.word_id(f) > UNK_ID for f in forms)
        if i >= len(enc.words) or enc.words[i].lower() != forms[0].lower() or not known:
            left_out += 1
            continue
        pairs.append(
            MinimalPair(enc, i, forms[0], forms[1], sg.columns["subject_number"], int(sg.columns["attractors"]))
        )
    return pairs, left_out


@torch.no_grad()
def judge_pairs(
    trained: TrainedModel,
    pairs: list[MinimalPair],
    source: DistanceSource,
    batch_size: int = 64,
    tree_of_text: bool = False,
) -> np.ndarray:
    """Per pair, whether the row prefers the grammatical version (bool array; ``tree_of_text``: the biased
    layers read the predictor's D̂ of the unmasked singular version, ``distill.masked_lm.read_hidden``)."""
    model, vocab = trained.model, trained.vocab
    model.eval()
    max_len = trained.encoder_config.max_len
    out = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        batch = collate([p.example for p in chunk], vocab, max_len, "none")  # type: ignore[misc]
        hidden = torch.zeros_like(batch["mask"])
        hidden[torch.arange(len(chunk)), torch.tensor([p.verb_index for p in chunk])] = True
        states, _ = read_hidden(model, batch, hidden, source, tree_of_text)
        scores = torch.log_softmax(model.word_logits(states[hidden]).float(), dim=-1)
        sg = torch.tensor([vocab.word_id(p.singular) for p in chunk])
        pl = torch.tensor([vocab.word_id(p.plural) for p in chunk])
        rows = torch.arange(len(chunk))
        prefers_singular = (scores[rows, sg] > scores[rows, pl]).numpy()
        out.append(prefers_singular == np.array([p.subject_number == "sg" for p in chunk]))
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def zero_shot(rows: dict[str, tuple[TrainedModel, ExperimentConfig]], report: LanguageModelReport) -> None:
    """Fill ``report``'s zero-shot fields: each row's share of pairs judged right, overall and by attractors,
    and the paired verdicts of the contrasts."""
    trained, config = rows[REFERENCE]
    pairs, report.zero_shot_left_out = minimal_pairs(config, trained)
    right = {
        name: judge_pairs(t, pairs, source_of(name, t), tree_of_text=name == READ_FROM_TEXT)
        for name, (t, _) in rows.items()
    }
    slices = {
        "all": np.ones(len(pairs), dtype=bool),
        "0 attractors": np.array([p.attractors == 0 for p in pairs]),
        "attractors ≥ 1": np.array([p.attractors >= 1 for p in pairs]),
    }
    report.zero_shot_pairs = {s: int(m.sum()) for s, m in slices.items()}
    report.zero_shot = {
        name: {s: 100.0 * float(r[m].mean()) if m.any() else math.nan for s, m in slices.items()}
        for name, r in right.items()
    }
    for slice_name, m in slices.items():
        if not m.any():
            continue
        resampler = Resampler(np.arange(int(m.sum())), 1)
        extra = [
            (name, other)
            for name in right
            if name not in (*TRAINED_ROWS, READ_FROM_TWIN)
            for other in (BASELINE, REFERENCE)
        ]
        found = [
            (a, b, paired_test(right[a][m][None], right[b][m][None], np.arange(int(m.sum())), resampler))
            for a, b in (*CONTRASTS, *extra)
            if a in right and b in right
        ]
        for (a, b, result), p_adj in zip(found, holm([r.p for _, _, r in found]), strict=True):
            report.zero_shot_contrasts.append(
                PairContrast(
                    slice=slice_name,
                    a=a,
                    b=b,
                    difference=result.difference,
                    ci95=result.ci95,
                    p=result.p,
                    p_holm=p_adj,
                    verdict=verdict(result.difference, result.ci95, p_adj),
                    detectable=result.detectable,
                )
            )


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


ROW_ORDER = ("parser_fed_twin", "parser_free", "parser_free_text", "locality", "no_syntax")


def render_markdown(report: LanguageModelReport) -> str:
    """The report as markdown: perplexity and accuracy per row, the paired contrasts, the zero-shot table."""
    lines = [
        f"Masked-word perplexity on {report.sentences:,} held-out sentences ({report.hidden_words:,} hidden words, "
        "the same for every row; lower is better):",
        "",
        "| row | perplexity | accuracy % |",
        "|---|---:|---:|",
    ]
    rows = [r for r in ROW_ORDER if r in report.perplexity] + [r for r in report.perplexity if r not in ROW_ORDER]
    lines += [f"| {r} | {report.perplexity[r]:.2f} | {report.accuracy[r]:.2f} |" for r in rows]
    lines += ["", "| contrast | Δ perplexity [95 % CI] | p (Holm) | verdict |", "|---|---:|---:|---|"]
    for c in report.contrasts:
        lines.append(
            f"| {c.a} − {c.b} | {c.perplexity_difference:+.2f} [{c.ci95[0]:+.2f}, {c.ci95[1]:+.2f}] "
            f"| {c.p_holm:.3g} | {c.verdict} |"
        )
    for name, (share, lo, hi) in report.places.items():
        lines += [
            "",
            f"{name}'s place from the twin (0) to no_syntax (1): {share:.2f} [{lo:.2f}, {hi:.2f}].",
        ]
        if name in report.trees:
            t = report.trees[name]
            scored = ", ".join(f"{k.upper()} {t[k]:.1f}" for k in ("uuas", "uas", "las") if k in t)
            lines[-1] += f" Its trees against the parser's: {scored}."
    if report.zero_shot:
        slices = list(report.zero_shot_pairs)
        lines += [
            "",
            f"Zero-shot agreement: minimal pairs whose grammatical version the row prefers, % "
            f"({report.zero_shot_left_out} pairs left out: a verb form outside the vocabulary):",
            "",
            "| row | " + " | ".join(f"{s} (n={report.zero_shot_pairs[s]})" for s in slices) + " |",
            "|---|" + "---:|" * len(slices),
        ]
        lines += [
            f"| {r} | " + " | ".join(f"{report.zero_shot[r][s]:.2f}" for s in slices) + " |"
            for r in rows
            if r in report.zero_shot
        ]
        lines += [
            "",
            "| slice | contrast | Δ points [95 % CI] | p (Holm) | detectable | verdict |",
            "|---|---|---:|---:|---:|---|",
        ]
        for z in report.zero_shot_contrasts:
            detectable = "—" if z.detectable is None else f"{z.detectable:.2f}"
            lines.append(
                f"| {z.slice} | {z.a} − {z.b} | {z.difference:+.2f} [{z.ci95[0]:+.2f}, {z.ci95[1]:+.2f}] "
                f"| {z.p_holm:.3g} | {detectable} | {z.verdict} |"
            )
    return "\n".join(lines) + "\n"
