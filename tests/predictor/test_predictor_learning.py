"""The predictor can learn: on ~20 toy trees over fixed random word vectors, the `heads` form reaches
UUAS 100 (exact distances) within a few hundred Adam steps, and the `probe` form lowers its loss."""

from __future__ import annotations

import numpy as np
import torch

from parserfree.core.trees import batch_tree_distances
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.distance_predictor import DistancePredictor
from parserfree.predictor.metrics import DistanceMetrics

D_MODEL = 32


def _toy_set(make_forest) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(0)
    trees = [make_forest(rng, int(rng.integers(3, 13)), 1 + (k % 5 == 0)) for k in range(20)]
    t = max(h.size for h in trees)
    heads = torch.full((len(trees), t), -1, dtype=torch.long)
    for b, h in enumerate(trees):
        heads[b, : h.size] = torch.from_numpy(h)
    distances = torch.from_numpy(batch_tree_distances([h.tolist() for h in trees], length=t))
    torch.manual_seed(0)
    h = torch.randn(len(trees), t, D_MODEL)  # fixed "encoder states": one random vector per word
    return h, heads >= 0, heads, distances


def _train(model: DistancePredictor, h, mask, heads, distances, steps: int) -> list[float]:
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        loss = model.loss(model(h, mask), heads, distances)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


def test_heads_form_learns_the_toy_trees_exactly(make_forest):
    h, mask, heads, distances = _toy_set(make_forest)
    torch.manual_seed(0)
    model = DistancePredictor(D_MODEL, PredictorConfig(arc_dim=32, max_relative_position=4), max_len=16)
    _train(model, h, mask, heads, distances, steps=100)
    with torch.no_grad():
        out = model.eval()(h, mask)
    metrics = DistanceMetrics(min_length=3)
    for b in range(h.shape[0]):
        n = int(mask[b].sum())
        metrics.update(out.distances[b, :n, :n].numpy(), heads[b, :n].numpy(), pred_heads=out.heads[b, :n].numpy())
    result = metrics.compute()
    assert result["uuas"] == 100.0
    assert result["l1"] == 0.0 and result["dspr"] > 0.999 and result["root_acc"] == 1.0
    torch.testing.assert_close(out.distances, distances.float(), atol=0, rtol=0)


def test_probe_form_lowers_its_loss(make_forest):
    h, mask, heads, distances = _toy_set(make_forest)
    torch.manual_seed(0)
    model = DistancePredictor(D_MODEL, PredictorConfig(form="probe", rank=16), max_len=16)
    losses = _train(model, h, mask, heads, distances, steps=150)
    assert losses[-1] < 0.3 * losses[0]
