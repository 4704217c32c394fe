"""Cycle breaking: argmax heads → a well-formed forest, inside the graph.

The step between the arc scorer and the tree distances of the `heads` predictor. Each word's argmax head
may form cycles (0 → 1 → 0), which are no tree: words on a cycle have no root and every path through
the cycle is wrong. This step repairs the heads in a fixed number of tensor steps (s = ⌈log2 max_len⌉
pointer jumps over B×T, and a row maximum over the scores of the words on cycles, usually few), so it
exports to ONNX like the rest of the predictor:

1. An example without any root (every word chose a head) gets one: the word whose root score is closest
   to the score of its chosen head.
2. Pointer jumping finds, for every word, the cycle or root its head walk ends on. Words whose walk
   ends on a root are in a tree and stay as they are.
3. On every cycle exactly one word is re-attached: over the cycle's words v and the tree words u, the
   pair with the largest score[v, u] − score[v, head(v)] (the cheapest change of one head; ties go to the
   lowest index). Each cycle word's best u is a maximum over its score row; the best word of each
   cycle is found by jumping along the cycle (a window of 2^s ≥ T steps from a cycle word covers
   exactly its cycle). All cycles are re-attached at once, and only to words that were already in a
   tree, so no new cycle can form: the result is a forest after one pass.

The roots are the scorer's own root choices (an example of several sentences keeps one per sentence it
found), plus one when there was none. Pad positions keep head −1.
"""

from __future__ import annotations

import torch
from torch import Tensor

from parserfree.predictor.tree_ops import ancestor_tables, cycle_words, jump, positions_like, with_pads_as_roots


def _masked(values: Tensor, keep: Tensor) -> Tensor:
    """``values`` where ``keep``, −inf elsewhere (``keep`` broadcasts; added, so no broadcasting select)."""
    return values + torch.where(keep, 0.0, float("-inf"))


def _best_along_walks(values: Tensor, ups: list[Tensor]) -> Tensor:
    """Per word, the index of the largest value among the first 2^s words of its head walk (ties: the
    lowest index), by pointer jumping: B×T long. The largest value first, then the lowest index holding it."""
    best_value = values
    for up in ups[:-1]:
        best_value = torch.maximum(best_value, jump(best_value, up))
    positions = positions_like(values)
    best = torch.where(values == best_value, positions, values.shape[-1])  # B×T
    for up in ups[:-1]:
        best = torch.minimum(best, jump(best, up))
    return best


def _best_reattachment(scores: Tensor, chosen: Tensor, in_tree: Tensor, cycle: Tensor) -> tuple[Tensor, Tensor]:
    """For every word on a cycle, the tree word it would best attach to and what that costs (its score
    there minus the score of its head; ≤ 0): B×T long heads and B×T float gains (−inf off cycles).

    Only the score rows of cycle words are read (usually few of the B·T), so the row maxima cost O(K·T)
    for K cycle words instead of a pass over all of B×T×T.
    """
    t = scores.shape[-1]
    rows = cycle.flatten().nonzero().squeeze(1)  # K, the cycle words as rows of the flattened B·T
    examples = torch.div(rows, t, rounding_mode="floor")  # K, the example of each
    row_scores = _masked(scores.flatten(0, 1).index_select(0, rows), in_tree.index_select(0, examples))  # K×T
    best_score, best_head = row_scores.max(dim=1)  # K each
    gain = best_score - chosen.flatten().index_select(0, rows)  # K
    gains = torch.full_like(chosen, float("-inf")).flatten().scatter(0, rows, gain)
    heads = torch.zeros_like(cycle, dtype=torch.long).flatten().scatter(0, rows, best_head)
    return heads.view_as(cycle), gains.view_as(chosen)


def break_cycles(scores: Tensor, heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Arc scores (B×T×T, row i over heads j, diagonal = root) + heads (B×T long, e.g. the argmax; −1 on
    pad) + mask (B×T bool) → heads of a forest (B×T long, root = self, −1 on pad)."""
    positions = positions_like(heads)
    heads = with_pads_as_roots(heads, mask)
    chosen = torch.gather(scores, 2, heads.unsqueeze(-1)).squeeze(-1)  # B×T, score of each word's head
    root_score = torch.gather(scores, 2, positions.expand_as(heads).unsqueeze(-1)).squeeze(-1)  # B×T, the diagonal

    # 1. at least one root per example
    roots = (heads == positions) & mask
    new_root = (positions == _masked(root_score - chosen, mask).argmax(dim=1, keepdim=True)) & ~roots.any(
        dim=1, keepdim=True
    )
    heads = torch.where(new_root, positions, heads)
    chosen = torch.where(new_root, root_score, chosen)

    # 2. which words are in a tree (their walk ends on a root) and which lie on a cycle
    ups = ancestor_tables(heads, n_steps)
    in_tree = (jump(heads, ups[-1]) == ups[-1]) & mask
    cycle = cycle_words(heads, ups, mask)

    # 3. per word, the best tree word to attach to; per cycle, the word where that costs least
    best_head, gains = _best_reattachment(scores, chosen, in_tree, cycle)
    reattach = cycle & (_best_along_walks(gains, ups) == positions)
    heads = torch.where(reattach, best_head, heads)
    return torch.where(mask, heads, torch.full_like(heads, -1))
