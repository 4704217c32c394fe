"""The language-model comparison's report: perplexity and accuracy per row, the paired contrasts, the
zero-shot judgments, and its Markdown (``parserfree lm-compare``; computed by ``comparison.language_model``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(kw_only=True)
class RowContrast:
    """Row a against row b, paired: the difference's 95 % interval, the sign-flip test's p, its Holm-corrected
    p over the contrasts it is tested with, and the verdict."""

    a: str
    b: str
    ci95: list[float]
    p: float
    p_holm: float = 1.0
    verdict: str = ""


@dataclass(kw_only=True)
class PerplexityContrast(RowContrast):
    """Perplexity on the same hidden words (a − b; lower is better)."""

    perplexity_difference: float


@dataclass(kw_only=True)
class PairContrast(RowContrast):
    """The zero-shot minimal pairs of one slice (points of pairs judged right, a − b)."""

    slice: str
    difference: float
    detectable: float | None


@dataclass(kw_only=True)
class LanguageModelReport:
    """Perplexity and accuracy per row, their paired contrasts, and the zero-shot agreement judgments."""

    runs: str
    sentences: int
    hidden_words: int
    perplexity: dict[str, float]
    accuracy: dict[str, float]
    contrasts: list[PerplexityContrast]
    places: dict[str, list[float]]  # row reading D̂ → [its place from the twin (0) to no_syntax (1), 95 % CI]
    trees: dict[str, dict[str, float]] = field(default_factory=dict)  # row reading D̂ → UUAS, UAS, LAS (%) of
    # the trees it reads against the parser's, on the same sentences
    zero_shot: dict[str, dict[str, float]] = field(default_factory=dict)  # row → slice → percent preferring
    zero_shot_pairs: dict[str, int] = field(default_factory=dict)  # slice → pairs scored
    zero_shot_left_out: int = 0
    zero_shot_contrasts: list[PairContrast] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


ROW_ORDER = ("parser_fed_twin", "parser_free", "parser_free_text", "locality", "no_syntax")


def render_markdown(report: LanguageModelReport) -> str:
    """The report as markdown: perplexity and accuracy per row, the paired contrasts, the zero-shot table."""
    lines = [
        f"Masked-word perplexity on {report.sentences:,} held-out sentences ({report.hidden_words:,} hidden words, "
        "the same for every row; lower is better):",
        "",
        "| row | perplexity | accuracy % |",
        "|---|---:|---:|",
    ]
    rows = [r for r in ROW_ORDER if r in report.perplexity] + [r for r in report.perplexity if r not in ROW_ORDER]
    lines += [f"| {r} | {report.perplexity[r]:.2f} | {report.accuracy[r]:.2f} |" for r in rows]
    lines += ["", "| contrast | Δ perplexity [95 % CI] | p (Holm) | verdict |", "|---|---:|---:|---|"]
    for c in report.contrasts:
        lines.append(
            f"| {c.a} − {c.b} | {c.perplexity_difference:+.2f} [{c.ci95[0]:+.2f}, {c.ci95[1]:+.2f}] "
            f"| {c.p_holm:.3g} | {c.verdict} |"
        )
    for name, (share, lo, hi) in report.places.items():
        lines += [
            "",
            f"{name}'s place from the twin (0) to no_syntax (1): {share:.2f} [{lo:.2f}, {hi:.2f}].",
        ]
        if name in report.trees:
            t = report.trees[name]
            scored = ", ".join(f"{k.upper()} {t[k]:.1f}" for k in ("uuas", "uas", "las") if k in t)
            lines[-1] += f" Its trees against the parser's: {scored}."
    if report.zero_shot:
        slices = list(report.zero_shot_pairs)
        lines += [
            "",
            f"Zero-shot agreement: minimal pairs whose grammatical version the row prefers, % "
            f"({report.zero_shot_left_out} pairs left out: a verb form outside the vocabulary):",
            "",
            "| row | " + " | ".join(f"{s} (n={report.zero_shot_pairs[s]})" for s in slices) + " |",
            "|---|" + "---:|" * len(slices),
        ]
        lines += [
            f"| {r} | " + " | ".join(f"{report.zero_shot[r][s]:.2f}" for s in slices) + " |"
            for r in rows
            if r in report.zero_shot
        ]
        lines += [
            "",
            "| slice | contrast | Δ points [95 % CI] | p (Holm) | detectable | verdict |",
            "|---|---|---:|---:|---:|---|",
        ]
        for z in report.zero_shot_contrasts:
            detectable = "—" if z.detectable is None else f"{z.detectable:.2f}"
            lines.append(
                f"| {z.slice} | {z.a} − {z.b} | {z.difference:+.2f} [{z.ci95[0]:+.2f}, {z.ci95[1]:+.2f}] "
                f"| {z.p_holm:.3g} | {detectable} | {z.verdict} |"
            )
    return "\n".join(lines) + "\n"
