import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parserfree.core.trees import (
    TreeError,
    batch_tree_distances,
    brute_force_distances,
    heads_from_minus_one_root,
    heads_from_one_based,
    heads_to_one_based,
    tree_distances,
    validate_heads,
)
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE


@st.composite
def forests(draw, max_n=128):
    """Random forests: word i (in a random order) attaches to an earlier word or becomes a root."""
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(n)))
    heads = np.empty(n, dtype=np.int64)
    for k, node in enumerate(order):
        if k == 0 or draw(st.floats(0, 1)) < 0.05:
            heads[node] = node
        else:
            heads[node] = order[draw(st.integers(0, k - 1))]
    return heads


@settings(max_examples=60, deadline=None)
@given(forests())
def test_distances_match_brute_force(heads):
    assert np.array_equal(tree_distances(heads), brute_force_distances(heads))


@settings(max_examples=20, deadline=None)
@given(st.lists(forests(max_n=30), min_size=1, max_size=4))
def test_batch_is_padded_stack_of_single_trees(batch):
    out = batch_tree_distances(batch)
    t = max(len(h) for h in batch)
    assert out.shape == (len(batch), t, t)
    for b, h in enumerate(batch):
        n = len(h)
        assert np.array_equal(out[b, :n, :n], tree_distances(h))
        assert (out[b, n:, :] == PAD_DISTANCE).all() and (out[b, :, n:] == PAD_DISTANCE).all()


def test_hand_computed_tree_and_forest():
    # "the cat sat . it purred": sat(2) root, the→cat→sat, .→sat ; purred(5) root of a second sentence, it→purred
    heads = [1, 2, 2, 2, 5, 5]
    d = tree_distances(heads)
    assert d[0, 2] == 2 and d[0, 3] == 3 and d[1, 3] == 2 and d[2, 2] == 0
    assert d[0, 4] == CROSS_TREE_DISTANCE and d[5, 3] == CROSS_TREE_DISTANCE
    assert d[4, 5] == 1
    assert (d == d.T).all()


def test_index_conventions_round_trip():
    one_based = [2, 0, 2, 3]  # word 2 (1-based) is the root
    h = heads_from_one_based(one_based)
    assert h.tolist() == [1, 1, 1, 2]
    assert heads_to_one_based(h).tolist() == one_based
    assert heads_from_minus_one_root([1, -1, 1, 2]).tolist() == [1, 1, 1, 2]


def test_invalid_heads_are_rejected_with_the_word():
    with pytest.raises(TreeError, match="word 2"):
        validate_heads([1, 1, 7])
    with pytest.raises(TreeError, match="cycle"):
        validate_heads([1, 2, 0])
    with pytest.raises(TreeError, match="out of range"):
        heads_from_one_based([0, 5])


def test_truncation_keeps_a_forest():
    out = batch_tree_distances([[1, 2, 3, 3]], length=2)
    assert out.shape == (1, 2, 2)
    assert out[0, 0, 1] == 1  # word 1's head (2) was cut, so word 1 became a root
