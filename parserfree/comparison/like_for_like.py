"""Like-for-like pairs: which rows of a comparison or a curve differ in one thing only, and what it is.

Only such a pair's difference can be put down to that one thing (the distance source of the biased
layers, having a predictor, or one setting of the resolved training config); the paired verdicts of a
report (``parserfree.comparison.paired``) are computed for these pairs and for every model row against every
shortcut baseline. Rows that fine-tune from masked-LM encoders of their own rows (``run.encoder_starts``:
encoders pre-trained alike but for the distance source) differ in the distance source only, before and
during fine-tuning; two starts that differ in anything else are a difference of their own.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.checkpoints import CheckpointError, read_checkpoint
from ..core.recipes import RECIPES, Recipe, Role
from ..distill.fingerprints import ADDED_SETTINGS, flatten
from ..distill.shipped import resolve_weights
from ..encoder.masked_words import MASKED_LM

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


def flat_settings(settings: dict) -> dict[str, Any]:
    """A run's nested settings as {"section.key": value}; a setting added since the run was written reads
    the value that computes what ran before it (``fingerprints.ADDED_SETTINGS``), so a row trained before a
    setting existed and one trained after it, at that value, do not differ in it."""
    return {**ADDED_SETTINGS, **flatten(settings)}


INIT_FROM = "training.init_from"


def is_model_setting(key: str) -> bool:
    """A flat setting that says what the model is (not the recipe, which the rows' comparison reads apart)."""
    return key != "recipe" and not key.startswith(NOT_THE_MODEL)


@functools.lru_cache(maxsize=32)
def masked_lm_start(ref: str | None) -> tuple[str, tuple] | None:
    """A start (``training.init_from``) that is a masked-LM encoder, as (its recipe, its other model
    settings); None for any other start or one that cannot be read (then the reference itself is compared)."""
    if not ref:
        return None
    try:
        meta = read_checkpoint(str(resolve_weights(ref)))["parserfree"]
    except (CheckpointError, OSError, KeyError, TypeError):
        return None
    if meta.get("task") != MASKED_LM:
        return None
    settings = flat_settings(meta["experiment"])
    return str(meta["recipe"]), tuple(sorted((k, repr(v)) for k, v in settings.items() if is_model_setting(k)))


def own_start(row: Recipe, start_recipe: str) -> bool:
    """A masked-LM start is the row's own: pre-trained as the row, or, for a parser-free row, as its twin (the
    reference row with a predictor like its own, so it kept the same weights; ``parser_fed`` has none)."""
    if start_recipe == row.name:
        return True
    start = RECIPES.get(start_recipe)
    return (
        row.role == Role.PARSER_FREE
        and start is not None
        and start.role == Role.REFERENCE
        and start.predictor == row.predictor
    )


def _starts_alike(ra: Recipe, rb: Recipe, ia: Any, ib: Any) -> bool:
    """Two different starts that are each row's own masked-LM encoder, pre-trained alike but for the recipe."""
    sa, sb = masked_lm_start(ia), masked_lm_start(ib)
    return bool(sa and sb and sa[1] == sb[1] and own_start(ra, sa[0]) and own_start(rb, sb[0]))


def like_for_like(rows: Mapping[str, tuple[dict, Recipe]]) -> list[Pairing]:
    """Pairs of rows (name → (resolved experiment settings, recipe row)) that differ in one thing only —
    the distance source of the biased layers (with their own masked-LM starts, module docstring), having a
    predictor, or one setting — in name order."""
    configs = {name: flat_settings(experiment) for name, (experiment, _) in rows.items()}
    out = []
    for a, b in itertools.combinations(sorted(rows), 2):
        ra, rb = rows[a][1], rows[b][1]
        ia, ib = configs[a].get(INIT_FROM), configs[b].get(INIT_FROM)
        sources_differ = (ra.train_source, ra.eval_source) != (rb.train_source, rb.eval_source)
        own_starts = sources_differ and ia != ib and _starts_alike(ra, rb, ia, ib)  # part of the source difference
        things = [
            f"setting {k}: {configs[a].get(k)!r} vs {configs[b].get(k)!r}"
            for k in sorted(set(configs[a]) | set(configs[b]))
            if is_model_setting(k) and configs[a].get(k) != configs[b].get(k) and not (own_starts and k == INIT_FROM)
        ]
        if sources_differ:
            source = f"distance source: {ra.train_source}→{ra.eval_source} vs {rb.train_source}→{rb.eval_source}"
            things.append(source + (" (each from its own masked-LM encoder)" if own_starts else ""))
        if ra.predictor != rb.predictor:
            things.append(f"predictor: {ra.predictor} vs {rb.predictor}")
        if len(things) == 1:
            out.append(Pairing(a, b, (ra.name, rb.name), things[0]))
    return out
