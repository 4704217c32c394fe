import pytest

from parserfree.distill.data.readers import DataError, read_file

CONLLU = """# sent_id = s1
# text = Don't go.
# label = neg
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\t_\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_
3.1\tgone\tgo\tVERB\t_\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = s2
1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\t_
"""


def test_conllu_multiword_and_empty_nodes_skipped(tmp_path):
    p = tmp_path / "g.conllu"
    p.write_text(CONLLU)
    a, b = read_file(p)
    assert a.words == ("Do", "n't", "go", ".")
    assert a.heads == (2, 2, 2, 2)  # 0-based, the root points to itself
    assert a.punct == (False, False, False, True)
    assert a.label == "neg" and a.text == "Don't go."
    assert b.words == ("Yes",) and b.heads == (0,)


@pytest.mark.parametrize(
    "bad_head, message", [("9", "sentence s1: 1-based head out of range"), ("x", "not an integer")]
)
def test_conllu_bad_heads_name_the_sentence(tmp_path, bad_head, message):
    p = tmp_path / "bad.conllu"
    p.write_text(CONLLU.replace("4\t.\t.\tPUNCT\t_\t_\t3", f"4\t.\t.\tPUNCT\t_\t_\t{bad_head}"))
    with pytest.raises(DataError, match=message):
        read_file(p)


def test_conllu_cycle_is_rejected_with_sentence_id(tmp_path):
    p = tmp_path / "cyc.conllu"
    p.write_text("# sent_id = loop7\n1\ta\t_\tX\t_\t_\t2\t_\t_\t_\n2\tb\t_\tX\t_\t_\t1\t_\t_\t_\n")
    with pytest.raises(DataError, match="loop7.*cycle"):
        read_file(p)


def test_csv_malformed_row_names_the_line(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('text,label\n"good film",1\n"bad film",0,extra\n')
    with pytest.raises(DataError, match=r"d.csv:3: expected 2 fields, found 3"):
        read_file(p)


def test_csv_and_tsv_columns(tmp_path):
    p = tmp_path / "d.tsv"
    p.write_text("id\tsentence\tstars\n1\tgreat, really\t5\n\n2\tawful\t1\n")
    rows = read_file(p, text_column="sentence", label_column="stars")
    assert [(r.text, r.label) for r in rows] == [("great, really", "5"), ("awful", "1")]
    with pytest.raises(DataError, match="no column 'text'"):
        read_file(p)


def test_csv_line_break_inside_a_quoted_text_does_not_glue_words(tmp_path):
    p = tmp_path / "d.csv"
    p.write_bytes(b'text,label\r\n"a great\r\nfilm",1\r\n"dull",0\r\n')
    rows = read_file(p)
    assert [(r.text, r.label, r.source) for r in rows] == [("a great\nfilm", "1", f"{p}:3"), ("dull", "0", f"{p}:4")]


def test_jsonl_malformed_row_names_the_line(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"text": "fine", "label": 1}\n{"text": "broken", "label": \n')
    with pytest.raises(DataError, match=r"d.jsonl:2: invalid JSON"):
        read_file(p)
    p.write_text('{"text": "fine", "label": 1}\n{"txt": "x", "label": 0}\n')
    with pytest.raises(DataError, match=r"d.jsonl:2: missing field 'text'"):
        read_file(p)


def test_invalid_utf8_names_the_line(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"fine line\nbad \xff byte\n")
    with pytest.raises(DataError, match=r"t.txt:2: invalid UTF-8"):
        read_file(p)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_or_blank_file_is_an_error(tmp_path, content):
    p = tmp_path / "e.txt"
    p.write_text(content)
    with pytest.raises(DataError, match="no examples"):
        read_file(p)
