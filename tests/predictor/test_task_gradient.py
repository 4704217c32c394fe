"""``task_grad_to_predictor`` does what its name says: the task loss alone reaches the arc scorer when it
is true (straight through the predicted tree, or through expected distances with ``soft``), never when
it is false; the straight-through D̂ keeps the values of the predicted tree."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from parserfree.encoder import BiasConfig
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel
from parserfree.predictor.tree_ops import distances_from_heads

from tiny_models import tiny_encoder

VOCAB = 40


def _model(task_grad: bool, **predictor) -> SyntaxModel:
    torch.manual_seed(0)
    encoder = tiny_encoder(vocab_size=VOCAB, bias=BiasConfig(max_distance=6))
    model = SyntaxModel(encoder, PredictorConfig(arc_dim=8, **predictor), "binary", 2, task_grad_to_predictor=task_grad)
    with torch.no_grad():  # a trained-looking bias table: zero-initialised it passes no gradient to D̂ at all
        model.encoder.bias.table.weight.copy_(
            torch.linspace(2.0, -2.0, model.encoder.bias.table.weight.numel()).view(-1, 1)
        )
        for p in model.predictor.arc_scorer.parameters():
            torch.nn.init.normal_(p, std=0.5)
    return model.train()


def _batch():
    gen = torch.Generator().manual_seed(1)
    mask = torch.arange(9).unsqueeze(0) < torch.tensor([[9], [6], [4]])
    word_ids = torch.randint(2, VOCAB, (3, 9), generator=gen) * mask
    feature_ids = torch.randint(1, 32, (3, 9, 3), generator=gen) * mask.unsqueeze(-1)
    return word_ids, feature_ids, mask, torch.tensor([0, 1, 1])


def _scorer_gradient(model: SyntaxModel) -> float:
    word_ids, feature_ids, mask, labels = _batch()
    out = model(word_ids, feature_ids, mask, source="predicted")
    F.cross_entropy(out.task, labels).backward()  # the task loss alone, no distance loss
    grads = [p.grad for p in model.predictor.arc_scorer.parameters()]
    return sum(float(g.abs().sum()) for g in grads if g is not None)


@pytest.mark.parametrize("soft", [False, True])
def test_task_loss_reaches_the_arc_scorer_when_task_grad_to_predictor_is_true(soft):
    assert _scorer_gradient(_model(True, soft=soft)) > 0


@pytest.mark.parametrize("soft", [False, True])
def test_task_loss_never_reaches_the_arc_scorer_when_task_grad_to_predictor_is_false(soft):
    assert _scorer_gradient(_model(False, soft=soft)) == 0


def test_straight_through_distances_are_the_predicted_trees_distances():
    model = _model(True)
    word_ids, feature_ids, mask, _ = _batch()
    h_k = model.encoder.lower(word_ids, feature_ids, mask)
    out = model.predictor(h_k, mask, differentiable=True)
    assert out.distances.requires_grad
    exact = distances_from_heads(out.heads, mask, model.predictor.n_steps)
    torch.testing.assert_close(out.distances.detach(), exact, atol=0, rtol=0)
    with torch.no_grad():  # inference builds no gradient path and gives the same values
        torch.testing.assert_close(model.eval()(word_ids, feature_ids, mask).predicted.distances, exact, atol=0, rtol=0)


def test_inference_reads_the_predicted_tree_by_lookup_and_gets_the_interpolated_bias():
    """Outside training the biased layers read the predicted tree's D̂ as integers (one table lookup each);
    the task output must be the one the interpolating float path gives for the same D̂ — a lookup off by
    one bucket, or pad pairs biased, changes it."""
    model = _model(True).eval()
    word_ids, feature_ids, mask, _ = _batch()
    assert not model.train()(word_ids, feature_ids, mask).predicted.whole  # straight through: floats with a gradient
    model.eval()
    with torch.no_grad():
        out = model(word_ids, feature_ids, mask, source="predicted")
        assert out.predicted.whole
        as_floats = model(word_ids, feature_ids, mask, distances=out.predicted.distances, source="parser")
    assert out.predicted.distances.dtype == torch.float32 and (out.predicted.distances < 0).any()  # pads too
    torch.testing.assert_close(out.task, as_floats.task, atol=1e-6, rtol=0)


@pytest.mark.parametrize("to_encoder", [True, False])
def test_distance_loss_reaches_the_shared_layers_only_with_distance_grad_to_encoder(to_encoder):
    model = _model(False)
    model.distance_grad_to_encoder = to_encoder
    word_ids, feature_ids, mask, _ = _batch()
    positions, lengths = torch.arange(9).expand(3, 9), mask.sum(1, keepdim=True)
    # a chain: each word headed by the next, the last its own head (the root); padding -1
    heads = torch.where(mask, torch.minimum(positions + 1, lengths - 1), torch.full_like(positions, -1))
    out = model(word_ids, feature_ids, mask, source="none", outputs="tree")
    model.predictor.loss(out.predicted, heads, distances_from_heads(heads, mask, 4)).backward()
    shared = [p.grad for p in [*model.encoder.word_embedding.parameters(), *model.encoder.layers[0].parameters()]]
    reached_shared = sum(float(g.abs().sum()) for g in shared if g is not None)
    reached_scorer = sum(
        float(p.grad.abs().sum()) for p in model.predictor.arc_scorer.parameters() if p.grad is not None
    )
    assert reached_scorer > 0
    assert (reached_shared > 0) == to_encoder
