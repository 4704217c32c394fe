"""The real spaCy teacher on a few sentences (the model ships as a package: no network)."""

import numpy as np
import pytest

from parserfree.core.parse import TeacherError, load_pipeline
from parserfree.core.trees import tree_distances
from parserfree.distill.teacher import SpacyTeacher


@pytest.fixture(scope="module")
def teacher():
    return SpacyTeacher()


def test_heads_are_zero_based_with_one_root_per_sentence(teacher):
    (p,) = list(teacher.parse(["The film was great. I loved it!"]))
    n = len(p.words)
    assert p.words[:4] == ("The", "film", "was", "great")
    roots = np.nonzero(p.heads == np.arange(n))[0]
    assert len(roots) == 2 and all(0 <= h < n for h in p.heads)
    assert p.punct.tolist() == [w in ".!" for w in p.words]
    d = tree_distances(p.heads)
    assert d[roots[0], roots[1]] == 1000  # different sentences


def test_parses_carry_spacy_dependency_labels(teacher):
    (p,) = list(teacher.parse(["The old man saw a dog that barked."]))
    labels = dict(zip(p.words, p.deps))
    assert len(p.deps) == len(p.words)
    assert labels["man"] == "nsubj" and labels["old"] == "amod" and labels["saw"] == "ROOT"
    assert labels["barked"] == "relcl"


def test_only_tok2vec_and_parser_are_loaded(teacher):
    assert teacher.nlp.pipe_names == ["tok2vec", "parser"]
    assert teacher.fingerprint["version"].startswith("en_core_web_sm")


def test_missing_model_gives_a_clear_error():
    with pytest.raises(TeacherError, match="not installed"):
        load_pipeline("en_no_such_model")


def test_the_cache_key_of_a_teacher_does_not_change_once_it_has_parsed_new_words(tmp_path):
    from parserfree.distill.parse_cache import parse_cached

    teacher = SpacyTeacher()  # its own: parsing adds the new words' strings to its vocabulary
    before = teacher.fingerprint
    _, first = parse_cached(["Zorblax quintuplexed the frabjous wug."], teacher, tmp_path, progress=False)
    _, second = parse_cached(["Zorblax quintuplexed the frabjous wug."], teacher, tmp_path, progress=False)
    assert teacher.fingerprint == before and second["key"] == first["key"] and second["reused"] == 1
    assert SpacyTeacher().fingerprint == before  # a fresh load (another process, a Dask worker) keys the same cache
