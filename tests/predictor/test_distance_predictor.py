"""DistancePredictor: shapes, padding, losses and gradients of both forms."""

from __future__ import annotations

import pytest
import torch

from parserfree.core.trees import batch_tree_distances
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.distance_predictor import DistancePredictor, PredictorOutput

D_MODEL = 16


def _batch(lengths: list[int], t: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    h = torch.randn(len(lengths), t, D_MODEL)
    mask = torch.arange(t).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return h, mask


def _predictor(**config) -> DistancePredictor:
    torch.manual_seed(0)
    model = DistancePredictor(D_MODEL, PredictorConfig(arc_dim=8, rank=4, **config), max_len=32)
    for p in model.parameters():  # leave the zero initialisation so scores are not all tied
        torch.nn.init.normal_(p, std=0.3)
    return model


@pytest.mark.parametrize("config", [{}, {"soft": True}, {"form": "probe"}])
def test_shapes_and_padding(config):
    h, mask = _batch([5, 8, 1], 9)
    out = _predictor(**config)(h, mask)
    pair_words = mask.unsqueeze(2) & mask.unsqueeze(1)
    assert out.distances.shape == (3, 9, 9) and out.distances.dtype == torch.float32
    assert (out.distances[~pair_words] == PAD_DISTANCE).all()
    assert (out.distances[pair_words] >= 0).all()
    assert (torch.diagonal(out.distances, dim1=1, dim2=2)[mask] < 1e-4).all()
    if config.get("form") == "probe":
        assert out.arc_scores is None and out.heads is None
        return
    assert out.arc_scores.shape == (3, 9, 9) and out.heads.shape == (3, 9)
    assert (out.heads[~mask] == -1).all()
    assert (out.heads[mask] < mask.sum(1).repeat_interleave(mask.sum(1))).all()  # never a pad column
    assert out.heads[2, 0] == 0  # a one-word example is its own root
    assert torch.isfinite(out.arc_scores).all()


def _path_lengths(heads: list[int]) -> list[list[int]]:
    """Brute force: breadth-first search from every word over the undirected edges word–head of a forest
    (a root points to itself); words of different trees are CROSS_TREE_DISTANCE apart."""
    n = len(heads)
    neighbours = [set() for _ in range(n)]
    for word, head in enumerate(heads):
        if head != word:
            neighbours[word].add(head)
            neighbours[head].add(word)
    table = []
    for start in range(n):
        far, frontier, step = {start: 0}, [start], 0
        while frontier:
            step += 1
            frontier = [m for w in frontier for m in neighbours[w] if m not in far]
            far.update({m: step for m in frontier})
        table.append([far.get(j, CROSS_TREE_DISTANCE) for j in range(n)])
    return table


def test_hard_distances_are_the_path_lengths_of_the_predicted_forest():
    h, mask = _batch([7, 9, 1], 9)
    out = _predictor()(h, mask)
    for b, n in enumerate(mask.sum(1).tolist()):
        heads = out.heads[b, :n].tolist()
        roots = [w for w, head in enumerate(heads) if head == w]
        assert roots and all(0 <= head < n for head in heads)
        expected = torch.tensor(_path_lengths(heads), dtype=out.distances.dtype)
        components = {tuple(j for j, x in enumerate(row) if x < CROSS_TREE_DISTANCE) for row in expected.tolist()}
        assert len(components) == len(roots)  # a forest: one root per tree, no cycle without a root
        torch.testing.assert_close(out.distances[b, :n, :n], expected, atol=0, rtol=0)
        assert (out.distances[b, n:] == PAD_DISTANCE).all() and (out.distances[b, :, n:] == PAD_DISTANCE).all()
    assert not out.distances.requires_grad


def test_soft_variant_passes_gradient_from_distances_to_arc_scorer():
    h, mask = _batch([6, 9], 9)
    model = _predictor(soft=True)
    out = model(h, mask)
    pair_words = mask.unsqueeze(2) & mask.unsqueeze(1)
    within = pair_words & (out.distances < CROSS_TREE_DISTANCE)
    out.distances[within].sum().backward()
    scorer = model.arc_scorer
    for param in (scorer.weight, scorer.head_bias, scorer.root.weight, scorer.dep[0].weight):
        assert param.grad is not None and param.grad.abs().sum() > 0 and torch.isfinite(param.grad).all()


def test_losses_are_finite_and_ignore_padding():
    h, mask = _batch([4, 6], 7)
    heads = torch.tensor([[1, 1, 1, 2, -1, -1, -1], [5, 0, 0, 2, 2, 5, -1]])
    gold = torch.from_numpy(batch_tree_distances([[1, 1, 1, 2], [5, 0, 0, 2, 2, 5]], length=7))
    for config in ({}, {"form": "probe"}):
        model = _predictor(**config)
        out = model(h, mask)
        loss = model.loss(out, heads, gold)
        assert loss.ndim == 0 and torch.isfinite(loss) and loss > 0
        h2 = h.clone()
        h2[~mask] = 100.0  # what sits under the padding must not matter
        assert torch.allclose(model.loss(model(h2, mask), heads, gold), loss)


def test_probe_loss_pushes_cross_sentence_pairs_into_the_bias_last_bucket():
    """Teacher-forced batches give pairs in different sentences the bias's last bucket; the probe must be
    trained to do the same (any D̂ ≥ far), not left free to put them close."""
    model = _predictor(form="probe")  # far_distance = 10, the bias's default max_distance
    c = CROSS_TREE_DISTANCE
    gold = torch.tensor([[[0, 1, c], [1, 0, c], [c, c, 0]]])
    labels = torch.tensor([[1, 1, 2]])
    near = torch.tensor([[[0.0, 3.0, 4.0], [2.0, 0.0, 0.0], [12.0, 0.0, 0.5]]])
    # same-sentence errors 2 + 1 + 0.5; cross pairs max(0, 10 − D̂): 6 + 10 + 0 + 10; over 9 word pairs
    assert model.loss(PredictorOutput(distances=near), labels, gold).item() == pytest.approx((3.5 + 26.0) / 9)
    far = torch.where(gold == c, torch.tensor(10.0), near)
    assert model.loss(PredictorOutput(distances=far), labels, gold).item() == pytest.approx(3.5 / 9)


def test_rejects_sentences_longer_than_max_len():
    h, mask = _batch([33], 33)
    with pytest.raises(ValueError, match="max_len 32"):
        _predictor()(h, mask)
