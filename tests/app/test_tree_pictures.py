"""Pictures of predicted trees: ``parserfree predict --with-tree --svg`` and the report's spaCy-vs-predicted figure."""

from __future__ import annotations

import json
import re

import numpy as np

from parserfree.commands.cli import main
from parserfree.export import ParserFreeModel
from parserfree.reports.figures import arc_differences, plot_tree_comparison


def test_predict_svg_draws_each_lines_predicted_tree(smoke_bundle, tmp_path, capsys):
    lines = ["The film is great, and I told my friends.", "", "A small movie with a big heart."]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n")
    code = main(
        [
            "predict",
            "--model",
            str(smoke_bundle[0]),
            "--input",
            str(source),
            "--output",
            str(tmp_path / "out.jsonl"),
            "--with-tree",
            "--svg",
            str(tmp_path / "svg"),
            "--quiet",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "svg").iterdir()) == ["1.svg", "3.svg"]  # no picture of an empty line
    items = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert all("distances" not in item for item in items)  # asked for trees, not for D̂
    expected = ParserFreeModel.load(smoke_bundle[0]).predict([lines[0], lines[2]], with_tree=True)
    assert [items[0]["heads"], items[2]["heads"]] == [e["heads"] for e in expected]
    for name, item in zip(["1.svg", "3.svg"], expected):
        svg = (tmp_path / "svg" / name).read_text()
        assert svg.startswith("<svg") and all(f">{w}</tspan>" in svg for w in item["words"])
        heads = np.array(item["heads"])
        assert svg.count('class="displacy-arc"') == int(
            np.sum(heads != np.arange(len(heads)))
        )  # one arc per non-root word
        arc_labels = re.findall(r'class="displacy-label"[^>]*>([^<]+)</textPath>', svg)
        assert sorted(arc_labels) == sorted(
            label for label, h, i in zip(item["labels"], heads, range(len(heads))) if h != i
        )


def test_svg_without_tree_is_a_one_line_error(smoke_bundle, tmp_path, capsys):
    code = main(["predict", "--model", str(smoke_bundle[0]), "--svg", str(tmp_path / "svg")])
    assert code == 2
    assert capsys.readouterr().err.strip() == "parserfree: error: --svg draws the predicted tree: add --with-tree"


def test_arc_differences_ignore_direction_and_roots():
    spacy_heads = np.array([1, 1, 1, 2])  # 0←1, 2←1, 3←2; root 1
    predicted = np.array([0, 0, 3, 0])  # 1←0 (same arc, other way), 3←0, 2←3; root 0
    diff = arc_differences(spacy_heads, predicted)
    assert diff["shared"] == {frozenset((0, 1)), frozenset((2, 3))}
    assert diff["spacy_only"] == {frozenset((1, 2))}
    assert diff["predicted_only"] == {frozenset((0, 3))}


def test_tree_comparison_figure_is_written(tmp_path):
    words = ["The", "film", "is", "great", "."]
    spacy_heads = np.array([1, 2, 2, 2, 2])
    chain = np.abs(np.subtract.outer(np.arange(5), np.arange(5))).astype(float)  # a chain: 0-1-2-3-4
    plot_tree_comparison(
        [(words, spacy_heads, chain), (words[:2], np.array([1, 1]), chain[:2, :2])], tmp_path / "trees.png"
    )
    assert (tmp_path / "trees.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
