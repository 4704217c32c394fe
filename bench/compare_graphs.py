"""A/B timing of graphs that compute the same thing: paired passes, the median ratio and its 95 % interval.

Every pass runs each graph over all the benchmark batches once, in a fresh random order; per graph against
the first (the baseline) the median of the per-pass time ratios, its bootstrap interval and the share of
passes it was faster (``bench.lib.paired``) — a lever is "faster" only when the interval lies above 1.

    python -m bench.compare_graphs A B [C …] [--batch 32] [--threads 2] [--passes 30] [--spinning]

``A`` etc.: a bundle folder (its task graph model.onnx; ``folder:variant`` for another variant, e.g.
``bundle:int8``; ``folder:tree`` or ``folder:tree:int8`` for a parser-free bundle's tree graph, which
also returns D̂, heads and labels) or an .onnx file; ``--threads-of NAME=K`` runs one of them on K
intra-op threads (e.g. the single-text session against the default one). Inputs: the vader-movies test
texts, tokenised and featurised with the first bundle's tokenizer and vocabulary, length-sorted batches.
``--tag`` names the comparison in its record (``--record --tag no-syntax-b32``).
"""

from __future__ import annotations

from typing import Any

from parserfree.export.runtime import SPINNING
from parserfree.export.timing import machine

from bench.lib.common import finish, parse, script_arguments
from bench.lib.paired import compare, comparison_table


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2)
    parser.add_argument("graphs", nargs="+", help="bundle, bundle:variant or .onnx; the first is the baseline")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads-of", action="append", default=[], help="NAME=K: run graph NAME on K threads")
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--n", type=int, default=1000, help="texts (batch 1: every other one of them)")
    parser.add_argument("--spinning", action="store_true", default=SPINNING)
    return parser


def tables(result: dict[str, Any]) -> str:
    return comparison_table(result)


def main(argv: list[str] | None = None) -> dict:
    parser = arguments()
    args = parse(parser, argv)
    if len(args.graphs) < 2:
        parser.error("give at least two graphs")
    threads = {spec: args.threads for spec in args.graphs}
    for item in args.threads_of:
        name, _, k = item.partition("=")
        if name not in threads:
            parser.error(f"--threads-of {item}: {name} is not one of the graphs")
        threads[name] = int(k)
    result = {"machine": machine(), **compare(args.graphs, args.batch, threads, args.passes, args.n, args.spinning)}
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
