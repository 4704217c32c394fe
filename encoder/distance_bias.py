"""Syntax bias: a tree-distance matrix → an additive attention-score bias (the method's core).

In the data flow this sits between the distances and the biased layers k+1..N: it receives either the
parser's integer distances D (B×T×T int64, pad pairs −1, pairs in different sentences
``CROSS_TREE_DISTANCE`` = 1000) or the predictor's float distances D̂ (B×T×T float), and returns the term
added to QKᵀ/√d before the softmax, B×1×T×T (one table shared by all heads, the method's choice) or
B×H×T×T (per head). Distances are clamped to 0..max_distance, so cross-sentence pairs simply fall in the
last bucket. Every distance, integer or float, interpolates linearly between the two buckets around
its position, so the parser's D and a predicted tree's D̂ get the same bias for the same distance
(teacher-forced and parser-free batches train the same table entries), the bias stays differentiable in
D̂, and it exports to ONNX as Floor/Gather/Mul. Integer distances with one bucket per distance (no log
buckets) sit exactly on a bucket, so they read their entry with one lookup instead (a table with a zero
row in front for the pairs that touch padding): the same value, at half the cost in the exported graph —
which is why the parser-free model hands its predicted tree's D̂ over as integers (syntax_model.py). Padding keys are never biased: they get `MASK_VALUE`, a
large negative but finite number, so even a row that is all padding stays finite after the softmax.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import BiasConfig

MASK_VALUE = -1e4  # additive score of an invisible key: exp(−1e4) is 0 in float32, yet finite in float16


def key_padding_bias(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Key padding mask B×T (True = real word) → additive bias B×1×1×T: 0 for real keys, MASK_VALUE for pads."""
    zero = torch.zeros((), dtype=dtype, device=mask.device)
    return torch.where(mask, zero, zero + MASK_VALUE)[:, None, None, :]


class SyntaxBias(nn.Module):
    """bias(i, j) = scale · table[bucket(D_ij)] (mode ``learned``), −α·min(D_ij, max) (``fixed_decay``),
    0 if D_ij ≤ k else MASK_VALUE (``hard_mask``), or 0 (``none``); plus MASK_VALUE on padding keys.

    Buckets: distance d ∈ 0..max_distance has position p(d) = d, or with ``log_buckets_from`` = L,
    p(d) = L + n_log · log(d/L) / log(max/L) above L (n_log = ⌈log2(max/L)⌉ buckets, T5-style).
    The table is interpolated at p(d) for integer and float distances alike (an integer d between two
    log buckets gets a blend of both, never the floor of one: the same value as the float d).
    ``per_head`` (one table column per head, output B×H×T×T), ``per_layer`` (one table per biased layer:
    the columns of each layer side by side, output B×(L·C)×T×T, which ``for_layers`` hands out a layer at
    a time) and ``prior_slope`` (the table starts at −slope·d) apply to mode ``learned``; the other modes
    give B×1×T×T.
    """

    def __init__(self, config: BiasConfig, n_heads: int, n_layers: int = 1) -> None:
        """``n_layers``: how many layers read the bias (the number of tables with ``per_layer``)."""
        super().__init__()
        config.validate()
        self.config = config
        self.mode = config.mode
        self.max_distance = config.max_distance
        self.n_tables = n_layers if config.per_layer and self.mode == "learned" else 1
        self.n_columns = (n_heads if config.per_head else 1) * self.n_tables
        self.log_from = config.log_buckets_from
        if self.log_from is None:
            self.n_log = 0
            self.n_buckets = self.max_distance + 1
        else:
            self.n_log = max(1, math.ceil(math.log2(self.max_distance / self.log_from)))
            self.n_buckets = self.log_from + self.n_log + 1
        # Only the mode's own parameters exist, so none sits unused in the optimiser.
        self.table: nn.Embedding | None = None  # n_buckets × (1 | H), mode "learned"
        self.scale: nn.Parameter | None = None  # learned global scale, init 1
        if self.mode == "learned":
            self.table = nn.Embedding(self.n_buckets, self.n_columns)
            if config.zero_init:
                nn.init.zeros_(self.table.weight)
            else:
                nn.init.normal_(self.table.weight, std=0.02)
            if config.prior_slope:
                with torch.no_grad():  # the prior shape −slope·d, per bucket at the distance it stands for
                    self.table.weight.sub_(config.prior_slope * self.bucket_distances()[:, None])
            if config.learned_scale:
                self.scale = nn.Parameter(torch.ones(()))
        if self.mode == "fixed_decay":
            alpha = torch.tensor(float(config.decay_alpha))
            if config.learn_alpha:
                self.alpha = nn.Parameter(alpha)
            else:
                self.register_buffer("alpha", alpha)

    def saturation(self) -> int:
        """The distance from which the bias stops changing: every distance from it on (and every pair in
        different sentences) gets the bias it gets — ``max_distance``, ``hard_mask_k`` + 1 for the hard
        mask, 1 for mode ``none`` (it reads no distance). So distances clamped there (min(d, saturation))
        give exactly the bias the full distances give (what the export's clamped task graph relies on)."""
        if self.mode == "hard_mask":
            return self.config.hard_mask_k + 1
        if self.mode == "none":
            return 1
        return self.max_distance

    # --- distance → bucket position -------------------------------------------------------------
    def position(self, distances: Tensor) -> Tensor:
        """Continuous bucket position p(d) of float distances (any shape), clamped to 0..n_buckets−1."""
        d = distances.clamp(0, self.max_distance)
        if self.log_from is None:
            return d
        L = float(self.log_from)
        log_part = L + self.n_log * torch.log(d.clamp(min=L) / L) / math.log(self.max_distance / L)
        return torch.where(d <= L, d, log_part)

    def bucket_distances(self) -> Tensor:
        """The distance each bucket stands for (n_buckets,), for plotting `curve()` against."""
        b = torch.arange(self.n_buckets, dtype=torch.float32)
        if self.log_from is None:
            return b
        L = float(self.log_from)
        log_anchor = L * (self.max_distance / L) ** ((b - L) / self.n_log)
        return torch.where(b <= L, b, log_anchor)

    # --- the bias itself ------------------------------------------------------------------------
    def _scaled_table(self) -> Tensor:
        """Table values with the global scale applied once per call: n_buckets×C (not per pair)."""
        return self.table.weight if self.scale is None else self.table.weight * self.scale

    def _learned(self, distances: Tensor) -> Tensor:
        """B×T×T (integer or float) → B×T×T×C table values interpolated at the bucket position."""
        table = self._scaled_table()
        p = self.position(distances.to(table.dtype))
        low = p.floor().clamp(max=self.n_buckets - 2)
        frac = (p - low).unsqueeze(-1)  # B×T×T×1
        below = F.embedding(low.long(), table)
        above = F.embedding(low.long() + 1, table)
        return below + (above - below) * frac

    def _entries(self, distances: Tensor) -> Tensor:
        """Integer B×T×T → B×T×T×C table entries by one lookup: d clamped to max_distance reads bucket d,
        a pair touching padding (d < 0) reads a zero row put in front of the table."""
        table = F.pad(self._scaled_table(), (0, 0, 1, 0))  # (1 + n_buckets)×C, row 0 = 0
        return F.embedding(distances.clamp(-1, self.max_distance) + 1, table)

    def _columns_first(self, values: Tensor) -> Tensor:
        """B×T×T×C → B×C×T×T (with one column a reshape, not a transpose of the B×T×T values)."""
        return values.squeeze(-1).unsqueeze(1) if self.n_columns == 1 else values.permute(0, 3, 1, 2)

    def _dtype(self, distances: Tensor) -> torch.dtype:
        if self.table is not None:
            return self.table.weight.dtype
        return distances.dtype if distances.is_floating_point() else torch.get_default_dtype()

    def _visible(self, distances: Tensor) -> Tensor:
        """hard_mask: 0 where d ≤ k, MASK_VALUE beyond (same shape as distances)."""
        zero = torch.zeros((), dtype=self._dtype(distances), device=distances.device)
        return torch.where(distances <= self.config.hard_mask_k, zero, zero + MASK_VALUE)

    def forward(self, distances: Tensor, mask: Tensor) -> Tensor:
        """distances B×T×T (int64 or float, pad pairs −1), mask B×T bool → additive bias B×(1|H)×T×T.

        The bias of pairs that touch padding (d < 0) is zero; padding keys get MASK_VALUE instead.
        With mode ``none`` only the padding term (B×1×1×T) is returned.
        """
        padding = key_padding_bias(mask, self._dtype(distances))  # B×1×1×T
        if self.mode == "none":
            return padding
        if self.mode == "learned" and self.log_from is None and not distances.is_floating_point():
            return self._columns_first(self._entries(distances)) + padding
        if self.mode == "learned":
            bias = self._columns_first(self._learned(distances))  # B×C×T×T
        elif self.mode == "fixed_decay":
            d = distances.clamp(0, self.max_distance).to(self._dtype(distances))
            bias = (-self.alpha * d).unsqueeze(1)  # B×1×T×T
        else:
            bias = self._visible(distances).unsqueeze(1)  # B×1×T×T
        real_pair = (distances >= 0).unsqueeze(1)  # B×1×T×T
        return torch.where(real_pair, bias, torch.zeros_like(bias)) + padding

    def for_layers(self, bias: Tensor, n_layers: int) -> list[Tensor]:
        """The bias each of ``n_layers`` biased layers adds, in order: ``bias`` (what ``forward`` gave, or the
        padding term alone) for every layer, or with ``per_layer`` each layer's own columns, B×C×T×T."""
        if self.n_tables == 1 or bias.shape[1] == 1:  # one table, or no distances (padding only)
            return [bias] * n_layers
        if n_layers != self.n_tables:
            raise ValueError(f"{n_layers} biased layers read a bias of {self.n_tables} per-layer tables")
        return list(bias.chunk(self.n_tables, dim=1))

    def curve(self) -> Tensor:
        """Bias value per bucket, scale included: (n_buckets,), or (n_buckets, columns) for per-head or
        per-layer tables (``column_names`` says which is which).

        Plot it against `bucket_distances()`. Modes without a table give their fixed function.
        """
        if self.table is not None:
            values = self._scaled_table()
            return values.squeeze(-1) if self.n_columns == 1 else values
        d = self.bucket_distances()
        if self.mode == "fixed_decay":
            return -self.alpha * d.to(self.alpha.device)
        if self.mode == "hard_mask":
            return self._visible(d)
        return torch.zeros_like(d)

    def column_names(self) -> list[str]:
        """A name for each column of ``curve()``: "" for one table, else "head h", "layer l" or "layer l head h"
        (l counts the biased layers from 1)."""
        per_table = self.n_columns // self.n_tables
        heads = [f"head {h}" for h in range(per_table)] if per_table > 1 else [""]
        layers = [f"layer {i + 1}" for i in range(self.n_tables)] if self.n_tables > 1 else [""]
        return [" ".join(part for part in (layer, head) if part) for layer in layers for head in heads]

    def extra_repr(self) -> str:
        return (
            f"mode={self.mode}, max_distance={self.max_distance}, n_buckets={self.n_buckets}, columns={self.n_columns}"
        )
