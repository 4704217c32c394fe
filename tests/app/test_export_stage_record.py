"""An export stage's record covers the code that builds the graph: a bundle exported by older graph code is
exported again, with a line naming what changed, instead of being reused."""

from __future__ import annotations

import parserfree.export.onnx_graph as onnx_graph
from parserfree.distill.config import ExperimentConfig
from parserfree.jobs.stage_records import StageRecord, export_fingerprint


def test_a_new_graph_version_makes_an_existing_bundle_stale(tmp_path, monkeypatch):
    checkpoint = tmp_path / "best.ckpt"
    checkpoint.write_bytes(b"weights")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    config = ExperimentConfig()
    variants = {"optimize": True, "quantize": "int8"}
    record = StageRecord(bundle, export_fingerprint(config, checkpoint, variants))
    record.start(fresh=False)
    record.finish()
    assert StageRecord(bundle, export_fingerprint(config, checkpoint, variants)).plan(intact=True) == ("skip", "")
    monkeypatch.setattr(onnx_graph, "GRAPH_VERSION", onnx_graph.GRAPH_VERSION + 1)
    action, why = StageRecord(bundle, export_fingerprint(config, checkpoint, variants)).plan(intact=True)
    assert action == "build" and "graph_version" in why
