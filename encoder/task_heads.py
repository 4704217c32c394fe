"""Task heads: the encoder's token states → one prediction per text.

The last step of the data flow: h_N (B×T×d) from `SyntaxEncoder` is pooled into one vector per text and
mapped to class logits (classification) or one score (regression, e.g. a sentiment mean). Pooling is a
masked mean over the real words: it uses every word (unlike a first-token summary, which this encoder
does not train specially) and does not depend on the padded length; an all-pad row pools to zeros
instead of dividing by zero.
"""

from __future__ import annotations

from torch import Tensor, nn

TASKS = ("classification", "regression")


def masked_mean(h: Tensor, mask: Tensor) -> Tensor:
    """h B×T×d, mask B×T bool → mean over real positions B×d (zeros for a row without real positions)."""
    weights = mask.to(h.dtype).unsqueeze(-1)  # B×T×1
    count = weights.sum(dim=1).clamp(min=1.0)  # B×1
    return (h * weights).sum(dim=1) / count


class TaskHead(nn.Module):
    """logits = W · Dropout(masked_mean(h)) + b: B×C for classification, B (squeezed) for regression."""

    def __init__(self, d_model: int, task: str, n_classes: int = 2, dropout: float = 0.0) -> None:
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"task={task!r} must be one of {', '.join(TASKS)}")
        if task == "classification" and n_classes < 2:
            raise ValueError(f"n_classes={n_classes} must be ≥ 2 for classification")
        self.task = task
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(d_model, n_classes if task == "classification" else 1)

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h B×T×d, mask B×T → logits B×C (classification) or scores B (regression)."""
        out = self.proj(self.dropout(masked_mean(h, mask)))
        return out if self.task == "classification" else out.squeeze(-1)
