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


def test_a_single_text_runs_on_one_thread_and_a_batch_on_the_threads_asked_for(smoke_bundle):
    """Catches the single-text session left unused (or used for batches), and one that gives other outputs."""
    model = ParserFreeModel.load(smoke_bundle[0], threads=2)
    assert model.session_for(4) is model.session
    single = model.session_for(1)
    assert single is not model.session and single.get_session_options().intra_op_num_threads == 1
    assert entry(single, "session.intra_op.allow_spinning") == "0"  # the load's spinning setting carries over
    texts = ["the film was good .", "a long and rather dull story about nothing at all ."]
    alone = [model.predict([t])[0] for t in texts]
    together = model.predict(texts)
    for a, b in zip(alone, together):
        assert a["label"] == b["label"]
        assert abs(a["probabilities"][a["label"]] - b["probabilities"][b["label"]]) < 1e-5
    one = ParserFreeModel.load(smoke_bundle[0], threads=1)
    assert one.session_for(1) is one.session  # already one thread: no second session
