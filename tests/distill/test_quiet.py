"""A training run's console: no Lightning device summary, tips or "was configured" notes; real warnings stay."""

import warnings

import lightning as L

from parserfree.distill.quiet import quiet_lightning


def test_trainer_prints_no_device_summary_tips_or_configuration_notes(tmp_path, capfd, caplog):
    quiet_lightning()
    with caplog.at_level("INFO"):
        L.Trainer(
            default_root_dir=tmp_path,
            accelerator="cpu",
            limit_train_batches=1.0,
            val_check_interval=1.0,
            enable_model_summary=False,
            enable_progress_bar=False,
        )
    out, err = capfd.readouterr()
    printed = out + err + caplog.text
    for noise in ("GPU available", "TPU available", "Tip", "litlogger", "was configured"):
        assert noise not in printed, noise


def test_only_the_noise_warnings_are_ignored():
    with warnings.catch_warnings(record=True) as caught:
        quiet_lightning()
        warnings.warn("Checkpoint directory /runs/x/checkpoints exists and is not empty.", UserWarning, stacklevel=1)
        warnings.warn("Checkpoint directory of something else", UserWarning, stacklevel=1)
        warnings.warn("another deprecation", FutureWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["Checkpoint directory of something else", "another deprecation"]
