"""The label scorer: it learns labels that depend on both ends of an arc, labels agree with the tree (one
root label, on roots only), unknown labels cost no loss, and ids round-trip through the inventory."""

from __future__ import annotations

import numpy as np
import torch

from parserfree.encoder.conventions import NO_LABEL
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.distance_predictor import (
    DistancePredictor,
    LabelScorer,
    label_ids,
    label_inventory,
    root_label,
)
from parserfree.predictor.loss import label_loss

D_MODEL, TYPES = 16, 4
INVENTORY = ("ROOT", "a", "b", "c", "d")


def _labelled_set(make_forest, n_trees: int, seed: int):
    """Random trees over words of 4 hidden types (a type vector plus per-word noise); a word's label is
    (type of the word + 2 · type of its head) mod 4 + 1, the root's "ROOT": neither end alone tells it."""
    rng = np.random.default_rng(seed)
    trees = [make_forest(rng, int(rng.integers(3, 11))) for _ in range(n_trees)]
    t = max(h.size for h in trees)
    heads = torch.full((n_trees, t), -1, dtype=torch.long)
    labels = torch.full((n_trees, t), NO_LABEL, dtype=torch.long)
    types = torch.from_numpy(rng.integers(0, TYPES, (n_trees, t)))
    for b, h in enumerate(trees):
        n = h.size
        heads[b, :n] = torch.from_numpy(h)
        labels[b, :n] = torch.where(
            heads[b, :n] == torch.arange(n), 0, (types[b, :n] + 2 * types[b, heads[b, :n]]) % TYPES + 1
        )
    gen = torch.Generator().manual_seed(seed)
    type_vectors = torch.randn(TYPES, D_MODEL, generator=torch.Generator().manual_seed(99))
    h = 2 * type_vectors[types] + torch.randn(n_trees, t, D_MODEL, generator=gen)  # B×T×d
    return h, heads >= 0, heads, labels


def test_label_scorer_learns_labels_that_need_both_ends_of_the_arc(make_forest):
    """Trained on 60 trees, it labels the arcs of 30 unseen trees at their gold heads (chance: 25 %)."""
    h, mask, heads, labels = _labelled_set(make_forest, 60, seed=0)
    torch.manual_seed(0)
    model = DistancePredictor(
        D_MODEL, PredictorConfig(arc_dim=16, label_dim=16, max_relative_position=4), max_len=16, dep_labels=INVENTORY
    )
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for _ in range(150):
        parts = model.losses(model(h, mask), heads, None, labels)
        optimiser.zero_grad()
        (parts["arc"] + parts["label"]).backward()
        optimiser.step()
        first = first if first is not None else parts["label"].item()
    assert parts["label"].item() < 0.2 * first
    h, mask, heads, labels = _labelled_set(make_forest, 30, seed=1)
    with torch.no_grad():
        out = model.eval()(h, mask)
        at_gold = model.label_scorer.scores(out.label_features, heads).argmax(-1)
    words = mask & (heads != torch.arange(heads.shape[1]))  # dependents (a root's label is fixed by the rule)
    assert (at_gold[words] == labels[words]).float().mean() > 0.9
    assert out.labels.shape == heads.shape and (out.labels[~mask] == NO_LABEL).all()


def test_roots_get_the_root_label_and_no_other_word_does():
    scorer = LabelScorer(4, 3, len(INVENTORY), root=root_label(INVENTORY))
    scores = torch.tensor([[[9.0, 1, 0, 0, 0], [0, 0, 5, 0, 0], [9.0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]])  # 1×4×L
    heads = torch.tensor([[1, 1, 1, -1]])  # word 1 is the root; word 3 is padding
    mask = heads >= 0
    assert scorer.labels(scores, heads, mask).tolist() == [[1, 0, 4, NO_LABEL]]  # not ROOT at 0 and 2; ROOT at 1
    plain = LabelScorer(4, 3, 2, root=None)  # an inventory without a root label: the best score everywhere
    assert plain.labels(scores[..., [1, 0]], heads, mask).tolist() == [[1, 0, 1, NO_LABEL]]


def test_words_without_a_known_label_cost_nothing():
    scores = torch.randn(2, 3, len(INVENTORY), requires_grad=True)
    none = torch.full((2, 3), NO_LABEL)
    loss = label_loss(scores, none)
    assert loss.item() == 0.0 and loss.requires_grad
    some = none.clone()
    some[0, 1] = 2
    expected = torch.nn.functional.cross_entropy(scores[0, 1:2], torch.tensor([2]))
    torch.testing.assert_close(label_loss(scores, some), expected)


def test_label_ids_map_through_the_inventory_and_mark_the_unknown():
    inventory = label_inventory([("nsubj", "ROOT", "dobj"), None, ("det", "", "nsubj")])
    assert inventory == ("ROOT", "det", "dobj", "nsubj")
    assert label_ids(("det", "relcl", "ROOT"), inventory, 3).tolist() == [1, NO_LABEL, 0]
    assert label_ids(("det",), inventory, 3).tolist() == [1, NO_LABEL, NO_LABEL]
    assert label_ids(None, inventory, 2).tolist() == [NO_LABEL, NO_LABEL]
    assert root_label(("acl", "root")) == 1 and root_label(("acl",)) is None


def test_label_scores_are_the_biaffine_form_for_every_label_and_word():
    """score_l(i, h(i)) = dep_iᵀ U_l head_h(i) + V_l · [dep_i; head_h(i)] + b_l, written out label by label:
    a reshape of U that mixes the label and feature axes, or a head view read at the wrong word, breaks it."""
    torch.manual_seed(0)
    scorer = LabelScorer(D_MODEL, 3, len(INVENTORY), root_label(INVENTORY))
    torch.nn.init.normal_(scorer.bilinear)
    h = torch.randn(2, 5, D_MODEL)
    heads = torch.tensor([[1, 1, 1, 2, 3], [4, 0, 0, 2, 4]])
    dep, head = scorer.features(h)
    got = scorer.scores((dep, head), heads)
    u = scorer.bilinear.view(3, len(INVENTORY), 3)  # a × L × a: U_l = u[:, l, :]
    for b in range(2):
        for i in range(5):
            j = int(heads[b, i])
            for label in range(len(INVENTORY)):
                want = dep[b, i] @ u[:, label, :] @ head[b, j]
                want = (
                    want + scorer.linear.weight[label] @ torch.cat([dep[b, i], head[b, j]]) + scorer.linear.bias[label]
                )
                assert torch.allclose(got[b, i, label], want, atol=1e-5), (b, i, label)
