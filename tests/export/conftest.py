"""Export fixtures: one bundle of the smoke run (with both variants) per session, and checkpoints of the
other recipes made from the smoke run's metadata with random weights (no extra training)."""

from __future__ import annotations

import copy
import shutil

import pytest
import torch

from encoder import EncoderConfig


@pytest.fixture(scope="session")
def smoke_checkpoint(smoke_run):
    run_dir, _ = smoke_run
    return run_dir / "checkpoints" / "best.ckpt"


@pytest.fixture(scope="session")
def smoke_bundle(smoke_checkpoint, tmp_path_factory):
    """(bundle folder, manifest) of the smoke model, exported once with --optimize and --quantize int8."""
    from export import export_bundle

    out = tmp_path_factory.mktemp("bundles") / "smoke"
    manifest = export_bundle(smoke_checkpoint, out, optimize=True, quantize="int8", threads=1)
    return out, manifest


@pytest.fixture
def bundle_copy(smoke_bundle, tmp_path):
    """A private copy of the smoke bundle that a test may damage."""
    target = tmp_path / "bundle"
    shutil.copytree(smoke_bundle[0], target)
    return target


def make_recipe_checkpoint(smoke_checkpoint, recipe: str, task: str, path) -> None:
    """A parser_fed or no_syntax checkpoint with the smoke run's vocabulary and data, random weights;
    task ``regression`` turns the smoke data's scores into the regression target."""
    from predictor.syntax_model import SyntaxModel

    meta = copy.deepcopy(torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)["parserfree"])
    encoder = dict(meta["encoder"], predictor_layer=0)
    if recipe == "no_syntax":
        encoder["bias"] = dict(encoder["bias"], mode="none")
    meta.update(encoder=encoder, predictor=None, recipe=recipe)
    meta["experiment"]["recipe"] = recipe
    if task == "regression":
        meta.update(task="regression", label_names=[])
        meta["experiment"]["data"]["task"] = "regression"
    torch.manual_seed(0)
    model = SyntaxModel(EncoderConfig.from_dict(encoder), None, meta["task"], max(2, len(meta["label_names"])))
    if model.encoder.bias.table is not None:
        torch.nn.init.normal_(model.encoder.bias.table.weight, std=1.0)  # a bias that matters
    state = {f"model.{k}": v for k, v in model.state_dict().items()}
    torch.save({"state_dict": state, "parserfree": meta}, path)


@pytest.fixture(scope="session")
def recipe_checkpoint(smoke_checkpoint, tmp_path_factory):
    """(recipe, task) → path of a checkpoint of that recipe and task (made once per session)."""
    made = {}

    def get(recipe: str, task: str = "binary"):
        if (recipe, task) not in made:
            made[recipe, task] = tmp_path_factory.mktemp("ckpt") / f"{recipe}-{task}.ckpt"
            make_recipe_checkpoint(smoke_checkpoint, recipe, task, made[recipe, task])
        return made[recipe, task]

    return get
