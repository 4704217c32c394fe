import pytest
import torch

from parserfree.predictor.syntax_model import TaskHead, masked_mean


def test_classification_and_regression_shapes():
    h, mask = torch.randn(3, 4, 8), torch.ones(3, 4, dtype=torch.bool)
    assert TaskHead(8, "classification", n_classes=5)(h, mask).shape == (3, 5)
    assert TaskHead(8, "regression")(h, mask).shape == (3,)


def test_masked_mean_ignores_padding_and_survives_all_pad_rows():
    h = torch.randn(2, 5, 8)
    mask = torch.tensor([[True, True, False, False, False], [False] * 5])
    pooled = masked_mean(h, mask)
    torch.testing.assert_close(pooled[0], h[0, :2].mean(0))
    assert (pooled[1] == 0).all()
    head = TaskHead(8, "classification", n_classes=3)
    assert torch.isfinite(head(h, mask)).all()
    h2 = h.clone()
    h2[0, 2:] = 1e3  # garbage at pad positions changes nothing
    torch.testing.assert_close(head(h2, mask), head(h, mask))


def test_bad_task_is_refused():
    with pytest.raises(ValueError, match="task='tagging'"):
        TaskHead(8, "tagging")
    with pytest.raises(ValueError, match="n_classes=1"):
        TaskHead(8, "classification", n_classes=1)
