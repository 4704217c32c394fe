"""Zero-shot agreement: the masked-LM rows judge agreement minimal pairs with no agreement label ever trained on.

For every test minimal pair of the built-in ``agreement`` set, the verb of its singular version is hidden
and the row scores the two verb forms (singular, plural) at that position; it prefers the grammatical
version when the form of the subject's number is the more probable. Every row reads the singular version's
words and tree — one choice for all pairs, made without knowing which version is grammatical, so the tree
cannot leak the answer. Pairs whose two forms are not both vocabulary words are left out (and counted).
Rows are compared by the paired verdicts of ``parserfree.comparison.paired``, overall and on the
attractor items.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core.checkpoints import TrainedModel
from ..distill.config import ExperimentConfig
from ..distill.data_module import SyntaxDataModule, collate
from ..distill.masked_lm import read_hidden
from ..encoder import UNK_ID
from ..encoder.vocabulary import word_vocabulary
from ..predictor.sources import DistanceSource
from ..reports.language_model import LanguageModelReport, PairContrast
from .lm_rows import BASELINE, CONTRASTS, READ_FROM_TEXT, READ_FROM_TWIN, REFERENCE, TRAINED_ROWS, source_of
from .paired import Resampler, holm, paired_test, verdict


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
    vocab = word_vocabulary(trained.vocab, "zero-shot minimal pairs")
    data = SyntaxDataModule(agreement, None, vocab, False, trained.dep_labels)
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
        known = all(vocab.word_id(f) > UNK_ID for f in forms)
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
    model, vocab = trained.model, word_vocabulary(trained.vocab, "zero-shot minimal pairs")
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
