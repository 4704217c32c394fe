"""Session settings (export/session.py) reach the onnxruntime session: what the benchmark measures is what runs."""

from __future__ import annotations

import pytest

from parserfree.export import ParserFreeModel
from parserfree.export.session import make_session


def entry(session, key: str) -> str:
    return session.get_session_options().get_session_config_entry(key)


@pytest.mark.parametrize("spinning, expected", [(True, "1"), (False, "0")])
def test_spinning_setting_is_applied_to_the_session(smoke_bundle, spinning, expected):
    """Catches a ``spinning`` argument that is accepted but never handed to onnxruntime."""
    session = make_session(smoke_bundle[0] / "model.onnx", threads=1, spinning=spinning)
    assert entry(session, "session.intra_op.allow_spinning") == expected


def test_runtime_default_does_not_spin(smoke_bundle):
    """The runtime's measured default (idle threads sleep) reaches its session; asking for spinning gives it."""
    assert entry(ParserFreeModel.load(smoke_bundle[0], threads=2).session, "session.intra_op.allow_spinning") == "0"
    spinning = ParserFreeModel.load(smoke_bundle[0], threads=2, spinning=True).session
    assert entry(spinning, "session.intra_op.allow_spinning") == "1"


def test_threads_and_parallel_mode_are_applied(smoke_bundle):
    import onnxruntime as ort

    options = make_session(smoke_bundle[0] / "model.onnx", threads=2, inter_op_threads=2).get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (2, 2)
    assert options.execution_mode == ort.ExecutionMode.ORT_PARALLEL
    with pytest.raises(ValueError, match="inter_op_threads=0"):
        make_session(smoke_bundle[0] / "model.onnx", inter_op_threads=0)
