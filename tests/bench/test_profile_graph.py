"""bench.profile_graph --checkpoint: the kernel time of the parser graph bench.parser times, by part."""

from bench.profile_graph import parser_graph

TEXTS = ["The film was good.", "A story that the critics who saw it loved runs long.", "Dull."] * 4


def test_the_parser_profile_times_the_graph_asked_for_fp32_or_int8(smoke_checkpoint):
    """Its kernels are the parser graph's (the arc scorer and the tree ops are in them), and ``quantize``
    profiles the int8 copy: a profile of the float graph under the int8 name would show no quantised product."""
    quantised_ops = {"DynamicQuantizeMatMul", "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeLinear"}
    for quantize in (None, "int8"):
        got = parser_graph(str(smoke_checkpoint), quantize, TEXTS, threads=1, passes=1)
        assert got["texts"] == len(TEXTS) and got["words"] > len(TEXTS) and got["kernel_ms"] > 0
        assert {"arc scorer", "tree ops + label products"} <= set(got["parts_ms"])
        assert bool(quantised_ops & set(got["ops_ms"])) == (quantize == "int8"), (quantize, sorted(got["ops_ms"]))
