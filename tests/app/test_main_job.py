"""The smoke main job end to end: train the like-for-like recipes, export, compare, report, index (fixture
data, no network)."""

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from parserfree.comparison.compare import dataset_slug
from parserfree.core.trees import batch_tree_distances
from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.teacher import SpacyTeacher
from parserfree.encoder.text import normalise_text
from parserfree.export import ParserFreeModel
from parserfree.jobs.main_job import run_main_job, run_task
from parserfree.predictor import DistanceMetrics


@pytest.fixture(scope="module")
def smoke_job(smoke_overrides, sentiment_file, tmp_path_factory):
    root = tmp_path_factory.mktemp("job")
    config = load_config("configs/smoke.yaml", [*smoke_overrides, f"run.compare_datasets=[{sentiment_file}]"])
    reports = run_main_job({"smoke": config}, root, progress=False)
    return root / "smoke", reports["smoke"]


def test_every_like_for_like_row_is_compared_and_differs_in_one_thing(smoke_job):
    out, report = smoke_job
    roles = {name: (m.recipe, m.role) for name, m in report.models.items() if m.kind == "model"}
    assert roles == {
        "parser_fed_twin": ("parser_fed_twin", "reference"),
        "parser_free": ("parser_free", "parser_free"),
        "no_syntax": ("no_syntax", "unbiased"),
        "locality": ("locality", "extra"),
    }
    assert [n for n, m in report.models.items() if m.kind == "baseline"] == [
        "majority",
        "bag_of_words",
    ]  # no agreement columns
    overall = [c for c in report.contrasts if c.slice == "all"]
    pairs = {(c.a, c.b): c.differs_in for c in overall if c.kind == "like_for_like"}
    assert len(pairs) == 6  # four models started alike: every pair differs in the distance source only
    assert all(d.startswith("distance source:") for d in pairs.values()), pairs
    assert {(c.a, c.b) for c in overall if c.kind == "baseline"} == {
        (m, b) for m in roles for b in ("majority", "bag_of_words")
    }
    assert all(c.verdict in ("ahead", "behind", "no difference shown") and c.p_holm >= c.p for c in overall)
    index = json.loads((out.parent / "index.json").read_text())
    scores = report.headline.scores
    assert {n: r["metric"] for n, r in index["tasks"]["smoke"]["rows"].items()} == {
        n: s.metric for n, s in scores.items()
    }
    assert len(index["tasks"]["smoke"]["contrasts"]) == len(overall)
    index_md = (out.parent / "index.md").read_text()
    assert "[report](smoke/report/report.md)" in index_md and "Like-for-like verdicts" in index_md


def test_index_gives_the_wall_time_of_every_stage_built(smoke_job):
    out, _ = smoke_job
    index = json.loads((out.parent / "index.json").read_text())
    stages = index["stage_seconds"]
    expected = {f"smoke/{r}" for r in ("no_syntax", "locality", "parser_fed_twin", "parser_free")} | {
        "smoke/bundle",
        "smoke/report",
    }
    assert expected <= set(stages) and all(stages[s] > 0 for s in expected)
    assert sum(stages.values()) <= index["seconds"] + 0.05 * len(stages)  # each stage's time is rounded to 0.1 s
    assert "| smoke/report |" in (out.parent / "index.md").read_text()


def test_report_says_what_it_ran_on_and_its_distance_quality_is_recomputable(smoke_job):
    """Dataset, split, threads and version are the run's; the first domain's row repeats the headline; each
    model's latency p50 ≤ p95; D̂'s DSpr and L1 and the |i − j| chain's UUAS and DSpr are recomputed here from
    the bundle's D̂ and spaCy's trees of the same test texts (UUAS and the metrics: the next test)."""
    import parserfree
    from parserfree.jobs.main_job import compare_threads
    from parserfree.predictor import chain_baseline

    out, _ = smoke_job
    report = json.loads((out / "report" / "report.json").read_text())
    config = load_config(out / "config.yaml")
    dataset = config.run.compare_datasets[0]
    assert (report["dataset"], report["split"], report["threads"]) == (dataset, "test", compare_threads(config))
    assert report["versions"]["parserfree"] == parserfree.__version__
    assert list(report["domains"]) == [dataset] and report["format"] == 2
    row = report["domains"][dataset]
    for name, m in report["models"].items():
        if m["kind"] == "model":
            assert 0 < m["speed"]["latency_ms_p50"] <= m["speed"]["latency_ms_p95"], name
        assert set(row["scores"][name]) >= {"metric", "per_seed", "over_best_baseline"}

    data = DataConfig(**{**asdict(config.data), "max_examples": None})
    texts = [e.text for e in load_dataset(data).splits["test"][: config.run.compare_max_examples]]
    assert row["n_examples"] == len(texts)
    results = ParserFreeModel.load(out / "bundle", threads=1).predict(texts, with_distances=True)
    parses = list(SpacyTeacher(config.parse.spacy_model).parse([normalise_text(t) for t in texts]))
    ours, chain = DistanceMetrics(), DistanceMetrics()
    for r, p in zip(results, parses, strict=True):
        ours.update(np.array(r["distances"]), p.heads, p.punct)
        chain.update(chain_baseline(len(p.words)), p.heads, p.punct)
    got, base = ours.compute(), chain.compute()
    assert row["distance"]["dspr"] == pytest.approx(got["dspr"])
    assert row["distance"]["l1"] == pytest.approx(got["l1"])
    assert row["distance"]["chain_uuas"] == pytest.approx(base["uuas"])
    assert row["distance"]["chain_dspr"] == pytest.approx(base["dspr"])


def test_report_numbers_match_an_independent_run_of_the_bundles(smoke_job):
    """Metrics, agreement, D̂ quality, words per sentence and the speed-up recomputed here from the bundles
    on the same test examples, in input order (catches misaligned gold labels or models, wrong ratios)."""
    out, _ = smoke_job
    report = json.loads((out / "report" / "report.json").read_text())
    config = load_config(out / "config.yaml")
    data = DataConfig(**{**asdict(config.data), "max_examples": None})
    examples = load_dataset(data).splits["test"][: config.run.compare_max_examples]
    texts, gold = [e.text for e in examples], np.array([e.label for e in examples])
    head = report["domains"][report["dataset"]]
    assert head["n_examples"] == len(texts)

    free = ParserFreeModel.load(out / "bundle", threads=1)
    results = free.predict(texts, with_distances=True)
    free_pred = np.array([free.label_names.index(r["label"]) for r in results])
    parses = list(SpacyTeacher(config.parse.spacy_model).parse([normalise_text(t) for t in texts]))
    fed = ParserFreeModel.load(out / f"bundle_{report['roles']['reference']}", threads=1)
    fed_pred = np.concatenate(
        [
            fed.run_words(
                [list(p.words) for p in parses[i : i + 32]], batch_tree_distances([p.heads for p in parses[i : i + 32]])
            )[0].argmax(-1)
            for i in range(0, len(parses), 32)
        ]
    )

    scores, models = head["scores"], report["models"]
    assert scores["parser_free"]["metric"] == pytest.approx(100 * np.mean(free_pred == gold))
    assert scores["parser_fed_twin"]["metric"] == pytest.approx(100 * np.mean(fed_pred == gold))
    assert head["agreement"] == pytest.approx(np.mean(free_pred == fed_pred))
    kept = [
        json.loads(line)
        for line in (out / "report" / "predictions" / dataset_slug(report["dataset"]) / "parser_free.jsonl")
        .read_text()
        .splitlines()
    ]
    assert [k["prediction"] for k in kept] == free_pred.tolist() and [k["text"] for k in kept] == texts  # item order
    quality = DistanceMetrics()
    for r, p in zip(results, parses):
        assert r["words"] == list(p.words)
        quality.update(np.array(r["distances"]), p.heads, p.punct)
    assert head["distance"]["uuas"] == pytest.approx(quality.compute()["uuas"])
    words_per_text = sum(len(p.words) for p in parses) / len(parses)
    for name, m in models.items():
        if m["speed"] is not None:
            assert m["speed"]["words_per_s"] / m["speed"]["sentences_per_s"] == pytest.approx(words_per_text), name
    assert report["speedup_end_to_end"] == pytest.approx(
        models["parser_free"]["speed"]["sentences_per_s"] / models["parser_fed_twin"]["speed"]["sentences_per_s"]
    )


def test_report_markdown_shows_the_json_numbers_and_links_every_picture(smoke_job):
    """Each model's row of report.md holds its metric, macro-F1, speed and latency from report.json (rounded
    as shown), the graph's UAS and LAS and its roots are drawn; the pictures linked are exactly the report
    folder's pictures, all drawn (not empty)."""
    import re
    import statistics

    out, _ = smoke_job
    report = json.loads((out / "report" / "report.json").read_text())
    md = (out / "report" / "report.md").read_text()
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| row | kind |")) + 2
    table = lines[start : start + len(report["models"])]  # the headline table's rows, in the JSON's order
    scores = report["domains"][report["dataset"]]["scores"]
    for line, (name, m) in zip(table, report["models"].items(), strict=True):
        score, speed = scores[name], m["speed"]
        margin = score["over_best_baseline"]
        f1 = [s["macro_f1"] for s in score["per_seed"]]
        expected = [
            name,
            f"{m['recipe']} · {m['role']}" if m["kind"] == "model" else "shortcut baseline",
            f"{score['metric']:,.2f}",
            f"{statistics.fmean(f1):,.3f}" + (f" ± {statistics.stdev(f1):.3f}" if len(f1) > 1 else ""),
            f"{margin['difference']:+.1f} [{margin['ci95'][0]:,.1f}, {margin['ci95'][1]:,.1f}] {margin['verdict']} "
            f"({margin['baseline']})"
            if margin
            else "–",
            *(
                [
                    f"{speed['sentences_per_s']:,.0f}",
                    f"{speed['latency_ms_p50']:,.2f}",
                    f"{speed['latency_ms_p95']:,.2f}",
                ]
                if speed
                else ["–"] * 3
            ),
        ]
        assert [c.strip() for c in line.strip("|").split("|")] == expected, line
    assert "## Paired verdicts" in md
    distance = report["domains"][report["dataset"]]["distance"]
    tree = distance["tree"]["all"]
    assert f"UAS **{tree['uas']:.1f}**, LAS **{tree['las'] or float('nan'):.1f}**".replace("nan", "–") in md
    assert distance["cycle_rate"] == 0.0  # the graph's heads: the cycle breaking leaves none
    assert f"the roots right in {100 * distance['root_acc']:.1f}% of sentences; a cycle in 0.0% of them" in md
    linked = set(re.findall(r"!\[[^\]]*\]\(([\w.]+\.png)\)", md))
    drawn = {p.name for p in (out / "report").glob("*.png")}
    assert (
        linked == drawn
        and {"bias_curves.png", "distance_heatmaps.png", "throughput.png", "training_curves.png", "tree_comparison.png"}
        <= drawn
    )
    for png in drawn:
        with Image.open(out / "report" / png) as im:
            assert im.size[0] > 300 and im.size[1] > 200
            assert len(np.unique(np.asarray(im.convert("L")))) > 2, f"{png} is blank"


def test_a_main_job_folder_becomes_records_whose_headline_shows_its_numbers(smoke_job, tmp_path):
    """`parserfree results add --from runs/main` on a real main job's output: each task's report and the
    index become records, and the README's headline shows the report's own numbers."""
    from parserfree.reports.records import add_records, load_records
    from parserfree.reports.results_page import Context, render_placeholder

    task_dir, report = smoke_job
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "template.md").write_text("")
    records = add_records(tmp_path, task_dir.parent, "parserfree run --config configs/smoke.yaml", commit="abc1234")
    assert [r.name for r in records] == ["main_smoke", "main_job"]
    headline = render_placeholder("headline main_smoke", Context(load_records(tmp_path), "docs/results/"))
    for name, model in report.models.items():
        kind = f"{model.recipe} · {model.role}" if model.kind == "model" else "shortcut baseline"
        assert f"| {name} | {kind} | {report.headline.scores[name].metric:,.2f} |" in headline
    assert "`parserfree run --config configs/smoke.yaml` (" in headline


def test_rerun_skips_finished_stages(smoke_job, capsys):
    out, report = smoke_job
    config = load_config(out / "config.yaml")
    again = run_task(config, out, progress=False)
    printed = capsys.readouterr().out
    assert "skipping" in printed and "training" not in printed
    assert again.headline.scores["parser_free"].metric == report.headline.scores["parser_free"].metric


def test_one_pretraining_dataset_keeps_its_own_trees_instead_of_being_flattened_to_text(monkeypatch, tmp_path):
    """silver-trees carries spaCy's trees: joining it into a text file would parse 70,000 sentences again."""
    from parserfree.distill.data import builtin_text
    from parserfree.jobs import stages as job_stages

    seen = {}
    monkeypatch.setattr(
        job_stages, "train_stage", lambda cfg, run_dir, cache_dir, progress: seen.update(cfg=cfg, run_dir=run_dir)
    )
    monkeypatch.setattr(
        builtin_text, "source_texts", lambda cache_dir, archive, text=None: (builtin_text.SourceText("src", "A text."),)
    )
    config = load_config(
        "configs/main/agreement.yaml",
        ["run.pretrain_datasets=[silver-trees]", "run.pretrain_epochs=2", "run.predictor_start=auto"],
    )
    predictor = job_stages.pretrain_stage(config, str(tmp_path), False)
    pre = seen["cfg"]
    assert pre.recipe == "pretrain_predictor" and pre.training.max_epochs == 2
    assert pre.data.dataset == "silver-trees" and pre.data.task == "none" and not list(tmp_path.rglob("*.txt"))
    assert predictor["checkpoint"] == str(seen["run_dir"] / "checkpoints" / "best.ckpt")
    assert seen["run_dir"].parent.parent == tmp_path / job_stages.PREDICTORS  # in the cache, not beside the output


def test_a_grafts_pretraining_is_the_predictor_on_h_k_its_encoder_starts_from_not_a_second_tower(monkeypatch, tmp_path):
    """A graft (a shipped tower beside the encoder) pre-trains the predictor on layer k that its encoder and
    auxiliary parser start from; the task's own predictor, a tower, would pre-train an 8-wide stub encoder."""
    from parserfree.distill.data import builtin_text
    from parserfree.jobs import stages as job_stages

    seen = {}
    monkeypatch.setattr(job_stages, "train_stage", lambda cfg, run_dir, cache_dir, progress: seen.update(cfg=cfg))
    monkeypatch.setattr(
        builtin_text, "source_texts", lambda cache_dir, archive, text=None: (builtin_text.SourceText("src", "A text."),)
    )
    config = load_config("configs/agreement_number_graft.yaml")
    assert config.predictor.has_tower and config.training.init_predictor_from
    job_stages.pretrain_stage(config, str(tmp_path), False)
    pre = seen["cfg"]
    assert not pre.predictor.has_tower and pre.predictor.tower_d_model is None
    assert (pre.encoder.d_model, pre.encoder.n_layers, pre.encoder.predictor_layer) == (128, 4, 2)
    job_stages.pretrain_stage(
        load_config("configs/agreement_number_graft.yaml", ["run.pretrain_predictor={}"]), str(tmp_path), False
    )
    assert seen["cfg"].predictor.has_tower and seen["cfg"].encoder.d_model == 8  # what it pre-trained before


def test_a_misspelt_pretrain_predictor_setting_is_named():
    from parserfree.encoder.schema import ConfigError

    with pytest.raises(ConfigError, match=r"run\.pretrain_predictor.*tower_layer"):
        load_config("configs/agreement_number_graft.yaml", ["run.pretrain_predictor={tower_layer: 0}"])
    with pytest.raises(ConfigError, match=r"run\.pretrain_predictor"):
        load_config("configs/agreement_number_graft.yaml", ["run.pretrain_predictor=[0]"])
    with pytest.raises(ConfigError, match=r"run\.pretrain_predictor\.tower_heads=3 must divide .*=128"):
        load_config(
            "configs/agreement_number_graft.yaml", ["run.pretrain_predictor={tower_heads: 3}"]
        )  # over the task's


def test_a_pretrained_predictor_in_the_cache_is_reused_whatever_the_output_folder(
    smoke_overrides, sentiment_file, tmp_path, capsys
):
    """`parserfree pretrain` trains once; run, train and curve of the same settings find it in the cache."""
    from parserfree.jobs.stages import cached_init, pretrain_stage

    overrides = [
        *smoke_overrides,
        f"data.cache_dir={tmp_path / 'cache'}",
        f"run.pretrain_datasets=[{sentiment_file}]",
        "run.pretrain_epochs=1",
        "training.limit_train_batches=0.2",
    ]
    short = pretrain_stage(load_config("configs/smoke.yaml", overrides), None, False, mode="train")
    longer = pretrain_stage(
        load_config("configs/smoke.yaml", [*overrides, "run.pretrain_epochs=2"]), None, False, mode="train"
    )
    assert (
        short["run_dir"] != longer["run_dir"] and Path(short["run_dir"]).parent == Path(longer["run_dir"]).parent
    )  # one family
    capsys.readouterr()
    found = pretrain_stage(load_config("configs/smoke.yaml", overrides), None, False)  # auto, as run and curve do
    assert "training" not in capsys.readouterr().out
    assert found["run_dir"] in (short["run_dir"], longer["run_dir"]) and found["chosen"] == "best cached"
    assert found["metrics"]["dev"]["uuas"] == max(short["metrics"]["dev"]["uuas"], longer["metrics"]["dev"]["uuas"])
    trained = cached_init(load_config("configs/smoke.yaml", [*overrides, "training.init_from=cached"]), None)
    assert trained.training.init_from == found["checkpoint"]
    capsys.readouterr()
    own = pretrain_stage(load_config("configs/smoke.yaml", [*overrides, "run.pretrain_epochs=3"]), None, False)
    assert "training" in capsys.readouterr().out and own["chosen"] == "trained for these settings"  # none read enough
    other = load_config("configs/smoke.yaml", [*overrides, "predictor.arc_dim=16", "training.init_from=cached"])
    with pytest.raises(FileNotFoundError, match="no pre-trained predictor of these settings"):
        cached_init(other, None)  # another predictor: nothing of its family is cached


def test_parser_free_trained_on_parser_trees_throughout_is_served_from_its_twin_not_trained_twice(smoke_job):
    """With teacher_forcing_end = 1 parser_free and its twin train identically: one training, two servings."""
    import torch

    from parserfree.core.checkpoints import load_trained

    out, _ = smoke_job
    metrics = json.loads((out / "parser_free" / "metrics.json").read_text())
    assert metrics["trained_as"] == str(out / "parser_fed_twin") and metrics["test"]["source"] == "predicted"
    free, twin = (
        load_trained(out / "parser_free/checkpoints/best.ckpt"),
        load_trained(out / "parser_fed_twin/checkpoints/best.ckpt"),
    )
    assert free.recipe == "parser_free" and free.experiment["recipe"] == "parser_free"
    assert all(torch.equal(a, b) for a, b in zip(free.model.state_dict().values(), twin.model.state_dict().values()))
    assert not (out / "parser_free" / "logs").exists()  # no second training


def test_training_rule_separates_a_parser_free_run_that_meets_its_own_distances_in_training():
    from parserfree.core.recipes import get_recipe, training_rule

    free, twin = get_recipe("parser_free"), get_recipe("parser_fed_twin")
    assert training_rule(free, 1.0) == training_rule(twin, 1.0)
    assert training_rule(free, 0.5) != training_rule(twin, 0.5)
    assert training_rule(get_recipe("parser_fed"), 1.0) != training_rule(twin, 1.0)  # no predictor, fixed layers
