"""Stage records: what each stage of the main job was built from, so a re-run skips, resumes or rebuilds it.

Every stage output of a task (a run folder, a bundle, the report folder) has a record
``stages/<output name>.json`` beside it: the stage's fingerprint — the resolved settings that matter to
it and the digests of its inputs (data files, the upstream checkpoint's sha256, the bundles' digests) —
and whether it finished. On the next run a stage is skipped when its record matches and its output is
intact, resumed (training) when it matches but did not finish, and otherwise rebuilt from scratch — its
old output deleted first, so a ``last.ckpt`` of other settings is never resumed — after one line saying
what changed. An output without a record (from an older parserfree, or whose record was lost) is rebuilt
too: nothing says what it was built from. The fingerprints of the three kinds of stage are defined here.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..distill.config import ExperimentConfig
from ..distill.data.datasets import DataConfig
from ..distill.fingerprints import changes, data_digest, file_digest, summary, without, without_added_at_their_old_value
from ..distill.shipped import resolve_weights
from ..encoder.files import write_json

# settings that say where things are or how fast they run, not what is computed
WHERE_AND_HOW_FAST = (
    "threads",
    "data.cache_dir",
    "data.archive",
    "training.num_workers",
    "training.init_from",
    "training.init_predictor_from",
    "run",
)


def training_fingerprint(config: ExperimentConfig, cache_dir: str | None = None) -> dict:
    """A training run depends on its resolved settings (the predictor section only for recipes with a
    predictor, the predictor's clipping only for those with a task; ``ADDED_SETTINGS`` at their old value left
    out), the content of its data and the checkpoint it starts from (a partial shipped one completed in
    ``cache_dir``, else ``data.cache_dir``: where ``train`` completes it)."""
    weights_cache = cache_dir or config.data.cache_dir
    settings = without_added_at_their_old_value(without(config.resolved().to_dict(), WHERE_AND_HOW_FAST))
    if not config.recipe_row.predictor:
        settings.pop("predictor", None)
    if not config.clips_predictor_apart:  # off, or it changes nothing in this recipe
        settings = without(settings, ("training.grad_clip_predictor_apart",))
    inputs = {
        "data": data_digest(config.data),
        "init_from": file_digest(resolve_weights(config.training.init_from, weights_cache)),
    }
    if config.training.init_predictor_from:  # only when set, so the records of runs without one still hold
        inputs["init_predictor_from"] = file_digest(resolve_weights(config.training.init_predictor_from, weights_cache))
    return {"settings": settings, "inputs": inputs}


def export_fingerprint(config: ExperimentConfig, checkpoint: Path, variants: dict) -> dict:
    """An export depends on its checkpoint, the variants it writes, the code that builds its graph
    (``GRAPH_VERSION``) and the data it checks and evaluates on."""
    from ..export.onnx_graph import GRAPH_VERSION

    return {
        "settings": {**variants, "graph_version": GRAPH_VERSION},
        "inputs": {"checkpoint": file_digest(checkpoint), "data": data_digest(config.data)},
    }


def compare_fingerprint(settings: dict, bundles: dict[str, Path], data: list[DataConfig]) -> dict:
    """A comparison depends on its settings, every bundle it runs (by digest) and the data it runs on."""
    from ..export.bundle import bundle_digest
    from ..export.errors import BundleError

    def digest(folder: Path) -> str:
        try:
            return bundle_digest(folder)
        except BundleError:
            return "unsealed"

    return {
        "settings": settings,
        "inputs": {
            "bundles": {name: digest(path) for name, path in bundles.items()},
            "data": {d.dataset: data_digest(d) for d in data},
        },
    }


@dataclass
class StageRecord:
    """The record of one stage output (``output``) and the fingerprint it must match."""

    output: Path
    fingerprint: dict
    _started: float | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.output.parent / "stages" / f"{self.output.name}.json"

    def _saved(self) -> dict | None:
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # missing or unreadable: as good as no record
        return saved if isinstance(saved, dict) and isinstance(saved.get("fingerprint"), dict) else None

    def plan(self, intact: bool) -> tuple[str, str]:
        """("skip" | "resume" | "build", why) — why is empty unless an existing output is being replaced.
        ``intact``: the stage's output is complete and readable."""
        saved = self._saved()
        has_output = self.output.exists() and any(self.output.iterdir())
        if saved is None:
            return "build", "no record of what the existing output was built from" if has_output else ""
        diff = changes(saved["fingerprint"], self.fingerprint)
        if diff:
            return "build", summary(diff)
        if saved.get("finished"):
            return ("skip", "") if intact else ("build", "its output is missing or damaged")
        return "resume", ""

    def start(self, fresh: bool) -> None:
        """Record that the stage starts; ``fresh`` deletes its old output first."""
        if fresh and self.output.exists():
            shutil.rmtree(self.output)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, {"fingerprint": self.fingerprint, "finished": False})
        self._started = time.perf_counter()

    def finish(self) -> float:
        """Record that the stage finished, with its wall time in seconds (returned)."""
        seconds = time.perf_counter() - self._started if self._started is not None else 0.0
        write_json(self.path, {"fingerprint": self.fingerprint, "finished": True, "seconds": round(seconds, 1)})
        return seconds

    def seconds(self) -> float | None:
        """Wall time of the stage's last finished build (None if unknown)."""
        saved = self._saved()
        return saved.get("seconds") if saved and saved.get("finished") else None
