"""Instruction counts: what a piece of the pipeline costs, independent of the machine's load (valgrind's callgrind).

Wall-clock A/B timings on a shared machine move by ±30 % between passes; the number of instructions a
piece of code executes does not (single-threaded, same inputs: the same count to within a few in 10⁴).
This script runs its own measuring part under ``valgrind --tool=callgrind`` with instrumentation off except
inside ``section(label)`` blocks (a client request through a tiny C helper compiled with gcc against
valgrind's ``callgrind.h``), and returns each label's instructions. Start-up — imports, session creation
— runs uninstrumented, so a count takes seconds to a minute, not the 50× slowdown of a fully
instrumented Python.

    python -m bench.instructions --graph A.onnx --graph B.onnx --bundle B [--quick]

counts ``session.run`` of each graph (1 intra-op thread) on the same prepared inputs of a bundle's
vocabulary and tokenizer at batch 32 and batch 1, plus the tokenizer and the featurisation of the same
texts, per sentence. Instruction counts are not time: a gather and a matrix product of the same count
differ in cycles (memory, vector width), so they decide between two versions of the same thing, and the
wall-clock bench (bench.inference, idle) gives the times.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.lib.common import DEFAULT_RUN, REPO, benchmark_texts, format_table, parse, script_arguments, write_record

ENV_LIB = "PARSERFREE_CALLGRIND_LIB"  # set in the child: the compiled helper's path
HELPER_C = """
#include <valgrind/callgrind.h>
void pf_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void pf_stop(const char *label) { CALLGRIND_DUMP_STATS_AT(label); CALLGRIND_STOP_INSTRUMENTATION; }
"""


def callgrind_missing() -> str | None:
    """Why instruction counts cannot be taken here (no valgrind, gcc or callgrind.h), else None."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (Debian: apt-get install valgrind)"
    if shutil.which("gcc") is None:
        return "gcc is not installed (needed to build the callgrind client-request helper)"
    if not Path("/usr/include/valgrind/callgrind.h").is_file():
        return "valgrind's callgrind.h is missing (/usr/include/valgrind)"
    return None


def _helper(folder: Path) -> Path:
    """Compile the client-request helper into ``folder``."""
    source, lib = folder / "pf_callgrind.c", folder / "pf_callgrind.so"
    source.write_text(HELPER_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(lib), str(source)], check=True)
    return lib


_LIB: ctypes.CDLL | None = None


@contextlib.contextmanager
def section(label: str) -> Iterator[None]:
    """Count the instructions of the block under ``label`` (when run by ``count``; else a no-op)."""
    global _LIB
    path = os.environ.get(ENV_LIB)
    if not path:
        yield
        return
    if _LIB is None:
        _LIB = ctypes.CDLL(path)
        _LIB.pf_stop.argtypes = [ctypes.c_char_p]
    _LIB.pf_start()
    try:
        yield
    finally:
        _LIB.pf_stop(label.encode())


def parse_dumps(folder: Path) -> dict[str, int]:
    """label → instructions, from the callgrind dump files in ``folder`` (one per ``section``)."""
    out: dict[str, int] = {}
    for dump in sorted(folder.glob("callgrind.out*")):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if trigger and total:
            out[trigger.group(1).strip()] = out.get(trigger.group(1).strip(), 0) + int(total.group(1))
    return out


def count(module: str, args: Sequence[str] = (), timeout: float = 1800) -> dict[str, int]:
    """Run ``python -m module args`` under callgrind (instrumented only inside ``section`` blocks) and
    return each section's instructions. Raises RuntimeError naming the missing tool or the child's failure."""
    missing = callgrind_missing()
    if missing:
        raise RuntimeError(f"instruction counts need callgrind: {missing}")
    with tempfile.TemporaryDirectory(prefix="pf-callgrind-") as tmp:
        folder = Path(tmp)
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # `-m bench.…` from anywhere
        env = {**os.environ, ENV_LIB: str(_helper(folder)), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        env["PYTHONPATH"] = path
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--dump-line=no",
            f"--callgrind-out-file={folder}/callgrind.out",
            sys.executable,
            "-m",
            module,
            *args,
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
            raise RuntimeError(f"{module} under callgrind exited {done.returncode}: {tail}")
        return parse_dumps(folder)


# ---------------------------------------------------------------- the graph/tokenizer/featurisation child
def _child(spec_path: str) -> None:
    """Under callgrind: count each spec'd graph's runs and the tokenizer and featurisation (see ``main``)."""
    from parserfree.export.graph_inputs import graph_inputs
    from parserfree.export.runtime import ParserFreeModel
    from parserfree.export.session import make_session
    from parserfree.export.timing import batches

    spec = json.loads(Path(spec_path).read_text())
    model = ParserFreeModel.load(spec["bundle"], threads=1)
    texts = spec["texts"]
    model.tokenize(texts[:8])  # warm the tokenizer's caches outside the count
    with section("tokenizer"):
        words = model.tokenize(texts)
    kept = sorted((w[: model.max_len] for w in words if w), key=len)
    groups = {32: batches(kept, 32), 1: [[w] for w in kept[:: spec["single_every"]]]}
    for size, chosen in groups.items():
        with section(f"featurise/{size}"):
            feeds = [graph_inputs(model.vocab, g, model.max_len) for g in chosen]
        for label, path in spec["graphs"].items():
            session = make_session(path, 1, spinning=False)
            for f in feeds[:2]:
                session.run(None, f)  # warm-up: allocation plans, caches
            with section(f"graph/{size}/{label}"):
                for f in feeds:
                    session.run(None, f)
    Path(spec["sizes"]).write_text(json.dumps({size: sum(map(len, chosen)) for size, chosen in groups.items()}))


def graph_counts(bundle: str | Path, graphs: dict[str, str | Path], texts: Sequence[str], single_every: int) -> dict:
    """Instructions per sentence of the tokenizer, the featurisation and each graph's ``session.run`` at
    batch 32 and 1 (one thread), counted under callgrind on the same texts."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.json"
        sizes = Path(tmp) / "sizes.json"
        spec.write_text(
            json.dumps(
                {
                    "bundle": str(bundle),
                    "graphs": {k: str(v) for k, v in graphs.items()},
                    "texts": list(texts),
                    "single_every": single_every,
                    "sizes": str(sizes),
                }
            )
        )
        counts = count("bench.instructions", ["--child", str(spec)])
        n = {int(k): v for k, v in json.loads(sizes.read_text()).items()}  # sentences per batch size
    out: dict = {"tokenizer": counts.get("tokenizer", 0) / len(texts), "featurise": {}, "graphs": {}}
    for size in (32, 1):
        out["featurise"][size] = counts.get(f"featurise/{size}", 0) / n[size]
        out["graphs"][size] = {label: counts.get(f"graph/{size}/{label}", 0) / n[size] for label in graphs}
    return out


def arguments():
    parser = script_arguments(__file__, __doc__, quick="96 texts")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bundle", help="bundle whose vocabulary and tokenizer prepare the inputs")
    parser.add_argument(
        "--graph",
        action="append",
        default=[],
        help="LABEL=PATH or PATH of an ONNX graph (repeatable; default: the bundle's variants)",
    )
    parser.add_argument("--n", type=int, help="texts (default 300, --quick 96)")
    return parser


def tables(result: dict[str, Any]) -> str:
    """Instructions per sentence of the tokenizer, the featurisation and each graph, at batch 32 and 1."""
    graphs = result["graphs"]
    batch_32, batch_1 = (graphs[k] if k in graphs else graphs[str(k)] for k in (32, 1))
    featurise = result["featurise"]
    rows = [
        {"what": "tokenizer", "batch 32": result["tokenizer"], "batch 1": result["tokenizer"]},
        {
            "what": "featurisation",
            "batch 32": featurise.get(32, featurise.get("32")),
            "batch 1": featurise.get(1, featurise.get("1")),
        },
    ]
    rows += [{"what": f"graph {k}", "batch 32": batch_32[k], "batch 1": batch_1[k]} for k in batch_32]
    head = (
        f"instructions per sentence ({result['n_texts']} texts; batch 1 on every {result['single_every']}th), "
        "one thread, callgrind"
    )
    return (
        head
        + "\n\n"
        + format_table(rows, [("what", "", ""), ("batch 32", "batch 32", ",.0f"), ("batch 1", "batch 1", ",.0f")])
    )


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    if args.child:
        _child(args.child)
        return {}
    bundle = Path(args.bundle or DEFAULT_RUN / "bundle")
    manifest = json.loads((bundle / "manifest.json").read_text())
    graphs = dict(g.split("=", 1) if "=" in g else (Path(g).stem, g) for g in args.graph) or {
        k: str(bundle / v) for k, v in manifest["models"].items()
    }
    texts = benchmark_texts("vader-movies", args.n or (96 if args.quick else 300), None)
    every = max(1, len(texts) // (16 if args.quick else 50))
    result = {
        "bundle": str(bundle),
        "n_texts": len(texts),
        "single_every": every,
        **graph_counts(bundle, graphs, texts, every),
    }
    print(tables(result))
    print(f"results: {write_record(result, args)}")
    return result


if __name__ == "__main__":
    main()
