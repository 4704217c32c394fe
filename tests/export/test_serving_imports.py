"""Serving loads what it serves with: the runtime, its tokenizer and the bundle — no data or training code."""

from __future__ import annotations

import json
import subprocess
import sys

DATA_AND_TRAINING = (
    "parserfree.distill.data.datasets",
    "parserfree.distill.data.readers",
    "parserfree.distill.data.builtin",
    "parserfree.distill.data.agreement",
    "parserfree.distill.data_module",
    "parserfree.distill.train",
    "parserfree.distill.co_training",
    "parserfree.jobs.main_job",
    "lightning",
)


def test_serving_a_bundle_imports_no_data_or_training_module(smoke_bundle):
    bundle, _ = smoke_bundle
    script = (
        "import json, sys\n"
        "from parserfree.export import ParserFreeModel\n"
        f"model = ParserFreeModel.load({str(bundle)!r})\n"
        "model.predict(['A small movie with a big heart.', 'Dull.'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = set(
        json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)
    )
    assert not loaded & set(DATA_AND_TRAINING), sorted(loaded & set(DATA_AND_TRAINING))
    data_modules = sorted(m for m in loaded if m.startswith("parserfree.distill.data"))
    assert data_modules == [], data_modules  # nothing of the data package at all
