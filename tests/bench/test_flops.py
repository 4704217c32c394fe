"""The analytic FLOP count of the parser-free graph (bench/lib/flops.py) against PyTorch's own count of the products."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from parserfree.core.recipes import get_recipe
from parserfree.export.onnx_graph import RecipeGraph
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

from bench.lib.flops import ModelShape, bundle_shape, executed_flops, flops_per_word, useful_flops
from tiny_models import tiny_encoder


def tiny(bias_all_layers: bool, form: str = "heads") -> tuple[SyntaxModel, ModelShape]:
    encoder = tiny_encoder(vocab_size=50, n_layers=3, d_ff=40, max_len=32, dropout=0.1, bias_all_layers=bias_all_layers)
    predictor = PredictorConfig(form=form, arc_dim=8, rank=6)
    model = SyntaxModel(encoder, predictor, task="binary", n_classes=3, seed=0).eval()
    return model, ModelShape.of(encoder, predictor, n_outputs=3)


@pytest.mark.parametrize("bias_all_layers", [True, False])
@pytest.mark.parametrize("form", ["heads", "probe"])
def test_flop_count_misses_no_product_of_the_graph(bias_all_layers, form):
    """Catches a formula that forgets the second pass over layers 1..k, attention's T-dependent term, the
    predictor or the task head: its count must equal PyTorch's count of the graph's matrix products, less
    what the exported graph computes once (layer 1's QKV and QKᵀ, shared by its two passes)."""
    model, shape = tiny(bias_all_layers, form)
    length = 7
    word_ids = torch.randint(1, 50, (1, length))
    feature_ids = torch.randint(1, 32, (1, length, model.encoder.config.n_features))
    mask = torch.ones(1, length, dtype=torch.bool)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        RecipeGraph(model, get_recipe("parser_free"))(word_ids, feature_ids, mask)
    matrix_vector = 2 * shape.predictor_width * length if form == "heads" else 0  # head·u: PyTorch counts no mv
    d = shape.d_model
    shared = length * (6 * d * d + 2 * length * d) if bias_all_layers else 0  # PyTorch computes it twice
    assert length * flops_per_word(shape, length)["total"] == pytest.approx(
        counter.get_total_flops() + matrix_vector - shared, rel=1e-9
    )


def test_hand_count_of_one_layer():
    """One layer without predictor, d 2, f 4, T 3: 8·4 + 4·2·4 + 4·3·2 = 88 FLOPs a word, plus 2·2·2/3 for the head."""
    shape = ModelShape(
        d_model=2,
        d_ff=4,
        n_layers=1,
        predictor_layer=0,
        bias_all_layers=False,
        predictor_form=None,
        predictor_width=0,
        n_outputs=2,
    )
    assert flops_per_word(shape, 3)["total"] == pytest.approx(88 + 8 / 3)


def test_padding_is_counted_only_as_executed_work():
    _, shape = tiny(True)
    assert executed_flops(shape, [[5, 5]]) == pytest.approx(useful_flops(shape, [5, 5]))
    padded = executed_flops(shape, [[2, 9]])
    assert padded == pytest.approx(2 * 9 * flops_per_word(shape, 9)["total"])
    assert padded > useful_flops(shape, [2, 9])


def test_bundle_shape_is_read_from_the_bundle(smoke_bundle):
    folder, _ = smoke_bundle
    import yaml

    config = yaml.safe_load((folder / "config.yaml").read_text())
    shape = bundle_shape(folder)
    assert (shape.d_model, shape.d_ff, shape.n_layers) == (
        config["encoder"]["d_model"],
        config["encoder"]["d_ff"],
        config["encoder"]["n_layers"],
    )
    assert shape.predictor_form == config["predictor"]["form"]


def test_flop_count_covers_the_tower_and_the_label_scorer():
    """Catches a formula that leaves out the parser tower (its projection, layers and attention) or the label
    scorer: the count must equal PyTorch's, plus the matrix–vector product PyTorch does not count (the arc
    scorer's head·u; the label scorer's products with its head's view are one batched product, counted)."""
    encoder = tiny_encoder(vocab_size=50, d_ff=40, max_len=32, dropout=0.1, predictor_layer=0, bias_all_layers=True)
    predictor = PredictorConfig(arc_dim=8, label_dim=6, tower_layers=2, tower_d_model=12, tower_heads=3, tower_d_ff=20)
    labels = ("ROOT", "amod", "det", "nsubj", "punct")
    model = SyntaxModel(encoder, predictor, task="binary", n_classes=3, seed=0, dep_labels=labels).eval()
    shape = ModelShape.of(encoder, predictor, n_outputs=3, n_labels=len(labels))
    assert (shape.tower_layers, shape.tower_d_model, shape.label_dim, shape.n_labels) == (2, 12, 6, 5)
    length = 9
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        RecipeGraph(model, get_recipe("parser_free"))(
            torch.randint(1, 50, (1, length)),
            torch.randint(1, 32, (1, length, 3)),
            torch.ones(1, length, dtype=torch.bool),
        )
    uncounted = 2 * shape.predictor_width * length
    parts = flops_per_word(shape, length)
    assert parts["tower"] > 0 and parts["labels"] > 0
    assert length * parts["total"] == pytest.approx(counter.get_total_flops() + uncounted, rel=1e-9)
