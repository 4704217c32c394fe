"""The built-in registry is the one list: the data docs' table, the ``--archive`` help and a new entry's
fields all come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from parserfree.distill.data.builtin import ARCHIVES, BUILTIN, BuiltinDataset
from parserfree.reports.doc_regions import outside

DATA_DOCS = Path(__file__).resolve().parents[2] / "docs" / "data.md"


def test_every_archive_a_dataset_reads_is_offered_to_archive():
    read = {a.filename for entry in BUILTIN.values() for a in entry.archives}
    assert read <= {a.filename for a in ARCHIVES} and len(read) >= 4
    # the agreement items are built from every English corpus, so they need every English corpus's archive
    assert {a.filename for a in BUILTIN["agreement"].archives} == {
        a.filename for name in ("vader-movies", "oanc", "brown", "nlp-corpus") for a in BUILTIN[name].archives
    }


def test_a_registry_entry_names_its_fields():
    with pytest.raises(TypeError):
        BuiltinDataset(lambda c: [], lambda c: "", "binary", "a source", ())  # type: ignore[misc]


@pytest.mark.parametrize("name", ["vader-movies", "vader-nyt", "vader-amazon", "vader-tweets"])
def test_each_vader_name_reads_its_own_ground_truth_file(name, monkeypatch, tmp_path):
    from parserfree.distill.data import vader
    from parserfree.distill.data.datasets import DataConfig

    for corpus, file in vader.CORPORA.items():
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(f"{corpus}_1\t1.5\ta sentence of {corpus}\n")
    monkeypatch.setattr(vader, "corpus_dir", lambda cache_dir, archive: tmp_path)
    raws = BUILTIN[name].load(DataConfig(dataset=name, cache_dir=str(tmp_path)))
    assert [r.text for r in raws] == [f"a sentence of {name}"]


@pytest.mark.parametrize("name", list(BUILTIN))
def test_every_built_in_dataset_has_a_test_and_its_source_in_the_data_docs(name):
    """The contributing steps (docs/contributing.md, "Adding a built-in dataset"): a test that names it, prose in docs/data.md."""
    tests = "\n".join(p.read_text() for p in (DATA_DOCS.parents[1] / "tests" / "data").glob("test_*.py"))
    assert f'"{name}"' in tests, f"no test in tests/data/ names the built-in dataset {name!r}"
    assert f"`{name}`" in outside(DATA_DOCS.read_text(), "generated"), f"docs/data.md says nothing of `{name}`"
