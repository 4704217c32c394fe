"""Like-for-like pairs: which rows of a comparison or a curve differ in one thing only, and what it is.

Only such a pair's difference can be put down to that one thing (the distance source of the biased
layers, having a predictor, or one setting of the resolved training config); the paired verdicts of a
report (``parserfree.paired``) are computed for these pairs and for every model row against every
shortcut baseline.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parserfree.distill.recipes import Recipe

# settings that say where files are or how fast it ran, not what the model is (a different ``init_from``,
# another start, does count)
NOT_THE_MODEL = ("data.cache_dir", "data.archive", "run.", "threads", "training.num_workers")


@dataclass(frozen=True)
class Pairing:
    """Two rows to compare (a before b) and the one thing they differ in."""

    a: str
    b: str
    recipes: tuple[str, str]
    differs_in: str


def flat_settings(settings: dict, prefix: str = "") -> dict:
    """A nested settings dict as {"section.key": value}."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        out.update(flat_settings(value, f"{name}.") if isinstance(value, dict) else {name: value})
    return out


def like_for_like(rows: Mapping[str, tuple[dict, Recipe]]) -> list[Pairing]:
    """Pairs of rows (name → (resolved experiment settings, recipe row)) that differ in one thing only —
    the distance source of the biased layers, having a predictor, or one setting — in name order."""
    configs = {name: flat_settings(experiment) for name, (experiment, _) in rows.items()}
    out = []
    for a, b in itertools.combinations(sorted(rows), 2):
        ra, rb = rows[a][1], rows[b][1]
        things = [
            f"setting {k}: {configs[a].get(k)!r} vs {configs[b].get(k)!r}"
            for k in sorted(set(configs[a]) | set(configs[b]))
            if k != "recipe" and configs[a].get(k) != configs[b].get(k) and not k.startswith(NOT_THE_MODEL)
        ]
        if (ra.train_source, ra.eval_source) != (rb.train_source, rb.eval_source):
            things.append(f"distance source: {ra.train_source}→{ra.eval_source} vs {rb.train_source}→{rb.eval_source}")
        if ra.predictor != rb.predictor:
            things.append(f"predictor: {ra.predictor} vs {rb.predictor}")
        if len(things) == 1:
            out.append(Pairing(a, b, (ra.name, rb.name), things[0]))
    return out
