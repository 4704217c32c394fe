"""How the agreement candidates (``distill.data.agreement``) are split into train, dev and test, by
``data.agreement_split`` (``SPLIT_RULES``). The split is by source sentence.

``balanced`` (the default): dev and test are made of balanced units — a singular and a plural sentence of
one cell (attractors × distance × cue × verb class), going to one split together, so every dev and test cell
stays balanced — stratified on attractors; the test split gets a larger share of each bucket than the
configured fraction — ``TEST_TARGETS`` source sentences where the data allows it (power to see a small
paired difference, and enough attractor items), never more than half of a bucket. Train takes the other
sentences, balanced the same way (``data.agreement_train_balance: cue``), on subject number alone within
attractor × distance cells (``number``: several times the sentences, the word-before-the-verb cue left in;
dev, balanced as test, says which trains better) or not at all (``none``).

``nearest_noun``, a generalisation split (``nearest_noun_splits``): train and dev hold only sentences whose
nearest noun before the verb has the subject's number, test only sentences whose nearest noun is an
attractor (``agreement.nearest_noun_misleads``: of the other number), so "agree with the nearest noun" is
right on every training sentence and wrong on every test one, and only the subject — which a tree links to
the verb — tells. Dev (``data.split``'s dev fraction of the plain sentences' units per attractor bucket) and
train (``data.agreement_train_balance``) are drawn and balanced as in the balanced split; test takes every
misled sentence left after balancing subject number within attractors × distance × verb class (the cue is
left out of its cell: there the word before the verb is mostly the attractor itself, so the -s cue misleads
as the nearest noun does, and balancing it would drop three misled sentences in five). On the main job's six
corpora (11,406 candidates, 740 misled): test 540 sentences (270 singular, 270 plural; 436 with one
attractor, 104 with two or more), dev 132, train 10,534 with ``agreement_train_balance: none`` (5,714
``number``, 1,188 ``cue``). The first noun is still the subject in 82 % of the test sentences. The silver
trees hold out the balanced split's dev and test sentences, not this split's: its test sentences that the
balanced split trains on (388 of the 540 on the six corpora) lie in their training text.

``large_test``, a test with the power to see half a point (``large_test_splits``): test is made of units
balanced on subject number within attractors × distance × verb class (``cue_free_cell``), the cue left
out of the cell as in the nearest-noun test, which gives 3.4 times the units of the balanced split's cells;
per attractor bucket it takes ``LARGE_TEST_TARGETS`` source sentences, never more than half of a bucket.
Dev and train are drawn from the other sentences as in the balanced split. On all nine corpora (62,185
candidates): test 6,066 sentences (1,723 misled), dev 766 and train 55,353 (``data.split``'s dev share 0.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .agreement import (
    ATTRACTOR_BUCKETS,
    DEFAULT_SPLIT,
    LARGE_TEST_TARGETS,
    NUMBERS,
    SPLIT_RULES,
    TEST_TARGETS,
    TRAIN_BALANCES,
    Candidate,
    attractor_bucket,
    distance_bucket,
    hash01,
)


def balanced_units(
    candidates: Sequence[Candidate],
    members: Sequence[int] | None = None,
    cell_of: Callable[[Candidate], tuple] | None = None,
) -> list[tuple[int, int]]:
    """The candidates kept (of ``members``; default all), as (singular, plural) index pairs of one cell:
    within every cell (``cell_of``; default ``Candidate.cell``: attractors × distance × cue × verb class)
    the k-th singular and the k-th plural subject in hash order, as many as the rarer number has. A unit
    goes to one split, so every split × cell holds both numbers equally often."""
    groups: dict[tuple, list[int]] = {}
    for i in range(len(candidates)) if members is None else members:
        cell = candidates[i].cell if cell_of is None else cell_of(candidates[i])
        groups.setdefault((*cell, candidates[i].subject_number), []).append(i)
    units = []
    for cell in sorted({key[:-1] for key in groups}):
        sg, pl = (
            sorted(groups.get((*cell, n), []), key=lambda i: hash01(candidates[i].key, "balance")) for n in NUMBERS
        )
        units += list(zip(sg, pl))
    return units


def test_split_shares(
    sizes: Mapping[str, int], test_fraction: float, targets: Mapping[str, int] = TEST_TARGETS
) -> dict[str, float]:
    """The test split's share of each attractor bucket (``sizes``: its number of units): the configured
    fraction, raised towards ``targets`` source sentences, at most one half."""
    shares = {}
    for b, n in sizes.items():
        wanted = targets.get(b, 0) / (2 * n) if n else 0.0  # a unit holds two source sentences
        shares[b] = max(test_fraction, min(0.5, wanted))
    return shares


def number_balanced(candidates: Sequence[Candidate], members: Sequence[int]) -> list[int]:
    """Of ``members``, as many singular as plural subjects within every attractor × distance cell (the first
    in hash order, ``balanced_units`` on that cell): the subject-number prior is gone, the
    word-before-the-verb cue is not."""
    units = balanced_units(candidates, members, _attractor_distance_cell)
    return [i for unit in units for i in unit]


def _attractor_distance_cell(c: Candidate) -> tuple[str, str]:
    """A candidate's (attractor bucket, distance bucket): the cell ``number_balanced`` balances within."""
    return attractor_bucket(c.attractors), distance_bucket(c.distance)


def check_split_settings(train_balance: str, split: str) -> None:
    """ValueError naming the setting when ``train_balance`` or ``split`` is not one of its choices."""
    if train_balance not in TRAIN_BALANCES:
        raise ValueError(f"data.agreement_train_balance={train_balance!r} must be one of {list(TRAIN_BALANCES)}")
    if split not in SPLIT_RULES:
        raise ValueError(f"data.agreement_split={split!r} must be one of {list(SPLIT_RULES)}")


def _units_by_bucket(
    candidates: Sequence[Candidate], units: Sequence[tuple[int, int]]
) -> dict[str, list[tuple[int, int]]]:
    """``units`` by attractor bucket, each bucket's in the split's hash order."""
    by_bucket: dict[str, list[tuple[int, int]]] = {b: [] for b in ATTRACTOR_BUCKETS}
    for unit in units:
        by_bucket[attractor_bucket(candidates[unit[0]].attractors)].append(unit)
    for bucket_units in by_bucket.values():
        bucket_units.sort(key=lambda u: hash01(candidates[u[0]].key + candidates[u[1]].key, "split"))
    return by_bucket


def _hold_out(
    by_bucket: Mapping[str, list[tuple[int, int]]],
    test_shares: Mapping[str, float],
    dev_fraction: float,
    splits: list[str],
) -> list[int]:
    """Per attractor bucket (``_units_by_bucket``), the first units to test (its share of the bucket), the
    next to dev (``dev_fraction`` of it), in ``splits``; returns the members of the units left."""
    rest: list[int] = []
    for bucket, bucket_units in by_bucket.items():
        n = len(bucket_units)
        n_test = round(test_shares.get(bucket, 0.0) * n)
        n_dev = min(n - n_test, round(dev_fraction * n))
        for rank, unit in enumerate(bucket_units):
            for i in unit:
                splits[i] = "test" if rank < n_test else "dev" if rank < n_test + n_dev else ""
            if rank >= n_test + n_dev:
                rest += unit
    return rest


def _fill_train(
    candidates: Sequence[Candidate], splits: list[str], rest: list[int], pool: Sequence[int], train_balance: str
) -> None:
    """Mark the training sentences in ``splits``: with ``train_balance`` "cue" ``rest`` (the members of the
    units left), with "number" the unassigned candidates of ``pool`` that ``number_balanced`` keeps, with
    "none" every unassigned candidate of ``pool``."""
    if train_balance == "number":
        rest = number_balanced(candidates, [i for i in pool if not splits[i]])
    elif train_balance == "none":
        rest = [i for i in pool if not splits[i]]
    for i in rest:
        splits[i] = "train"


def assign_splits(
    candidates: Sequence[Candidate], fractions: Sequence[float], train_balance: str = "cue", split: str = DEFAULT_SPLIT
) -> list[str]:
    """Split of each candidate ("" when balancing leaves it out), by ``split`` (``SPLIT_RULES``). Balanced:
    dev and test are made of balanced units (``balanced_units``): per attractor bucket, units in hash order
    give the test split its share (``test_split_shares``), then dev its fraction. Train takes the rest:
    with ``train_balance`` "cue" the remaining units (balanced as dev and test are), with "number" every
    remaining candidate that ``number_balanced`` keeps — more sentences, the word-before-the-verb cue left
    in —, with "none" every remaining candidate (the corpora's own mix of numbers and cues, as Linzen et al.
    trained). Nearest noun: ``nearest_noun_splits``."""
    check_split_settings(train_balance, split)
    if split == "nearest_noun":
        return nearest_noun_splits(candidates, fractions, train_balance)
    if split == "large_test":
        return large_test_splits(candidates, fractions, train_balance)
    by_bucket = _units_by_bucket(candidates, balanced_units(candidates))
    shares = test_split_shares({b: len(u) for b, u in by_bucket.items()}, fractions[2])
    splits = [""] * len(candidates)
    rest = _hold_out(by_bucket, shares, fractions[1], splits)
    _fill_train(candidates, splits, rest, range(len(candidates)), train_balance)
    return splits


def cue_free_cell(c: Candidate) -> tuple[str, str, str]:
    """A candidate's cell without the word-before-the-verb cue: (attractor bucket, distance bucket, verb class)."""
    attractors, distance, _, verb_class = c.cell
    return attractors, distance, verb_class


def nearest_noun_splits(candidates: Sequence[Candidate], fractions: Sequence[float], train_balance: str) -> list[str]:
    """The generalisation split (module docstring): test holds every candidate whose nearest noun before the
    verb is an attractor (``nearest_noun_misleads``) that balancing on subject number within attractors ×
    distance × verb class keeps (``cue_free_cell``: there the word before the verb is mostly that noun, so
    its cue misleads too); dev and train hold only candidates whose nearest noun has the subject's number —
    dev ``fractions[1]`` of their balanced units per attractor bucket, train the rest, balanced by
    ``train_balance`` as in the balanced split. A misled candidate balancing leaves out is in no split;
    ``fractions[2]`` is not read."""
    misled = [i for i, c in enumerate(candidates) if c.nearest_noun_is_attractor]
    plain = [i for i, c in enumerate(candidates) if not c.nearest_noun_is_attractor]
    splits = [""] * len(candidates)
    for unit in balanced_units(candidates, misled, cue_free_cell):
        for i in unit:
            splits[i] = "test"
    rest = _hold_out(_units_by_bucket(candidates, balanced_units(candidates, plain)), {}, fractions[1], splits)
    _fill_train(candidates, splits, rest, plain, train_balance)
    return splits


def large_test_splits(candidates: Sequence[Candidate], fractions: Sequence[float], train_balance: str) -> list[str]:
    """The large test (module docstring): per attractor bucket, the first units in hash order of those
    balanced on subject number within ``cue_free_cell`` go to test, ``LARGE_TEST_TARGETS`` source sentences
    (at most half of the bucket's units); dev and train are drawn from the candidates left as in the balanced
    split — dev ``fractions[1]`` of their balanced units per bucket, train the rest by ``train_balance``.
    ``fractions[2]`` is not read."""
    by_bucket = _units_by_bucket(candidates, balanced_units(candidates, None, cue_free_cell))
    shares = test_split_shares({b: len(u) for b, u in by_bucket.items()}, 0.0, LARGE_TEST_TARGETS)
    splits = [""] * len(candidates)
    _hold_out(by_bucket, shares, 0.0, splits)
    left = [i for i in range(len(candidates)) if not splits[i]]
    rest = _hold_out(_units_by_bucket(candidates, balanced_units(candidates, left)), {}, fractions[1], splits)
    _fill_train(candidates, splits, rest, left, train_balance)
    return splits
