"""Co-training (LightningModule): task loss + λ·distance loss, moving the biased layers from D to D̂.

The training logic of every recipe, one code path driven by the recipe's row (``core.recipes``):
the row says where the biased layers take distances from during training (``train_source``; the
``scheduled`` rule feeds D with probability p(step), decaying 1 → 0, else D̂) and at validation
(``eval_source``, as the model will be used), whether a predictor learns D from h_k (arc cross-entropy
or probe L1) and whether there is a task loss. The model itself is plain PyTorch
(``predictor.syntax_model.SyntaxModel``).
"""

from __future__ import annotations

import random

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F

from ..core.checkpoints import CHECKPOINT_FORMAT
from ..core.recipes import get_recipe
from ..core.task_metrics import predictions, task_metrics
from ..encoder import EncoderConfig, Vocabulary
from ..encoder.conventions import NO_TASK_LABEL
from ..predictor import DistanceMetrics, PredictorConfig
from ..predictor.distance_predictor import DistancePredictor
from ..predictor.sources import DistanceSource
from ..predictor.syntax_model import Outputs, SyntaxModel
from .config import ExperimentConfig
from .evaluate import update_distance_metrics
from .schedules import inverse_sqrt_factor, teacher_forcing_probability
from .soft_labels import distillation_loss


class CoTrainingModule(L.LightningModule):
    """Trains a ``SyntaxModel`` with the recipe's losses, schedules, optimiser and metrics."""

    def __init__(
        self,
        config: ExperimentConfig,
        encoder_config: EncoderConfig,
        predictor_config: PredictorConfig | None,
        vocab: Vocabulary,
        label_names: list[str],
        dep_labels: tuple[str, ...] = (),
        auxiliary: PredictorConfig | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.recipe = config.recipe
        self.row = get_recipe(config.recipe)
        self.task = config.data.task if self.row.task else "none"
        self.vocab = vocab
        self.label_names = label_names
        self.dep_labels = tuple(dep_labels)
        self.encoder_config = encoder_config
        self.predictor_config = predictor_config
        n_classes = max(2, len(label_names))
        self.model = SyntaxModel(
            encoder_config,
            predictor_config,
            self.task,
            n_classes,
            config.training.task_grad_to_predictor,
            seed=config.seed,
            dep_labels=self.dep_labels,
            distance_grad_to_encoder=config.training.distance_grad_to_encoder,
        )
        # the auxiliary parser (training.auxiliary_parser_weight): a predictor on h_k beside a parser tower, in
        # training only — it is not part of ``self.model``, so no checkpoint's model and no graph has it
        self.auxiliary = (
            DistancePredictor(
                encoder_config.d_model,
                auxiliary,
                encoder_config.max_len,
                encoder_config.bias.max_distance,
                dep_labels=self.dep_labels,
                encoder=encoder_config,
            )
            if auxiliary is not None and config.training.auxiliary_parser_weight > 0
            else None
        )
        self._val_pred: list[np.ndarray] = []
        self._val_gold: list[np.ndarray] = []
        self.distance_metrics = DistanceMetrics()

    # ----------------------------------------------------------------- steps
    def task_loss(self, output: torch.Tensor, batch: dict) -> torch.Tensor:
        """The task's loss on one batch's task output: cross-entropy (mixed with the teacher's soft term in a
        student's batch, ``distill.soft_labels``), or squared error for regression."""
        if self.task == "regression":
            return F.mse_loss(output, batch["labels"])
        if "soft_logits" not in batch:
            return F.cross_entropy(output, batch["labels"])
        # a student's batch (training.soft_labels): gold cross-entropy over the labelled texts, the soft term
        # over the texts the teacher labelled; a transfer text has no gold label (NO_TASK_LABEL)
        t = self.config.training
        labelled, has_soft = batch["labels"] != NO_TASK_LABEL, batch["has_soft"]
        zero = output.sum() * 0  # a batch of transfer texts only: no gold term, and no NaN from an empty mean
        gold = F.cross_entropy(output[labelled], batch["labels"][labelled]) if labelled.any() else zero
        soft = (
            distillation_loss(output[has_soft], batch["soft_logits"][has_soft], t.soft_label_temperature)
            if has_soft.any()
            else zero
        )
        return (1 - t.soft_label_weight) * gold + t.soft_label_weight * soft

    def training_inputs(self, batch: dict) -> dict:
        """The batch a training step feeds the model (as loaded here; ``masked_lm`` hides words)."""
        return batch

    def evaluation_inputs(self, batch: dict) -> dict:
        """The batch a validation step feeds the model (as loaded here; ``masked_lm`` hides words)."""
        return batch

    def collect_validation(self, output: torch.Tensor, batch: dict) -> None:
        """Keep what the epoch's task scores need from one validation batch."""
        pred = predictions(self.task, output)
        self._val_pred.append(pred.detach().cpu().numpy())
        self._val_gold.append(batch["labels"].cpu().numpy())

    def log_task_scores(self) -> None:
        """Log the validation epoch's task scores (``val/metric`` is what the best checkpoint is chosen on)."""
        if self._val_pred:
            scores = task_metrics(
                self.task, np.concatenate(self._val_pred), np.concatenate(self._val_gold), max(2, len(self.label_names))
            )
            self.log("val/metric", scores["metric"], prog_bar=True, sync_dist=True)
            if "macro_f1" in scores:
                self.log("val/macro_f1", scores["macro_f1"], sync_dist=True)
        self._val_pred, self._val_gold = [], []

    def teacher_forcing_p(self) -> float:
        """Current probability of feeding parser distances to the biased layers during training."""
        if self.row.train_source != DistanceSource.SCHEDULED:
            return 1.0 if self.row.train_source == DistanceSource.PARSER else 0.0
        total = max(1, int(self.trainer.estimated_stepping_batches)) if self._trainer is not None else 1
        t = self.config.training
        return teacher_forcing_probability(self.global_step, total, t.teacher_forcing_fraction, t.teacher_forcing_end)

    def training_source(self, p: float) -> DistanceSource:
        """The distance source of this training step. ``scheduled``: parser distances with probability p,
        drawn from (seed, step) only, so a resumed run makes the same choices; else the row's source."""
        if self.row.train_source != DistanceSource.SCHEDULED:
            return self.row.train_source
        draw = np.random.default_rng((self.config.seed, self.global_step)).random()
        return DistanceSource.PARSER if draw < p else DistanceSource.PREDICTED

    def _forward(self, batch: dict, source: DistanceSource, predict: bool = True):
        return self.model(
            batch["word_ids"],
            batch["feature_ids"],
            batch["mask"],
            batch["distances"],
            source=source,
            outputs=Outputs.BOTH if predict else Outputs.TASK,
        )

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        batch = self.training_inputs(batch)
        p = self.teacher_forcing_p()
        learns = self.config.training.distance_loss_weight > 0 or self.task == "none"
        out = self._forward(batch, self.training_source(p), predict=learns)  # λ = 0: the predictor runs only if read
        loss = torch.zeros((), device=batch["mask"].device)
        bs = batch["mask"].shape[0]
        if out.task is not None:
            task_loss = self.task_loss(out.task, batch)
            loss = loss + task_loss
            self.log("train/task_loss", task_loss, prog_bar=True, batch_size=bs)
        weight = self.config.training.distance_loss_weight
        if out.predicted is not None and (weight > 0 or out.task is None):  # λ = 0: no distance loss to compute
            dist_loss = self._predictor_loss(out.predicted, batch, "train", bs)
            loss = loss + weight * dist_loss
            self.log("train/distance_loss", dist_loss, prog_bar=True, batch_size=bs)
        if self.auxiliary is not None:  # layers 1..k learn the parser's trees through the auxiliary parser
            aux = self.auxiliary(out.h_k, batch["mask"], False)  # the step's own h_k: layers 1..k run once
            aux_loss = self._predictor_loss(aux, batch, "train/auxiliary", bs, self.auxiliary)
            loss = loss + self.config.training.auxiliary_parser_weight * aux_loss
            self.log("train/auxiliary_loss", aux_loss, batch_size=bs)
        self.log("train/p", p, batch_size=bs)
        self.log("train/loss", loss, batch_size=bs)
        return loss

    def _predictor_loss(self, predicted, batch: dict, stage: str, bs: int, predictor=None) -> torch.Tensor:
        """The predictor loss (arc or probe + weighted label loss); the label loss is also logged alone.
        ``predictor``: the one that predicted (default: the model's)."""
        predictor = predictor if predictor is not None else self.model.predictor
        parts = predictor.losses(predicted, batch["heads"], batch["distances"], batch.get("dep_labels"))
        if "label" in parts:
            self.log(f"{stage}/label_loss", parts["label"], batch_size=bs, sync_dist=stage == "val")
            return parts["arc"] + predictor.config.label_loss_weight * parts["label"]
        return parts.get("arc", parts.get("probe"))

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        batch = self.evaluation_inputs(batch)
        out = self._forward(batch, self.row.eval_source)
        bs = batch["mask"].shape[0]
        if out.task is not None:
            self.log("val/task_loss", self.task_loss(out.task, batch), batch_size=bs, sync_dist=True)
            self.collect_validation(out.task, batch)
        if out.predicted is not None:
            dist_loss = self._predictor_loss(out.predicted, batch, "val", bs)
            self.log("val/distance_loss", dist_loss, batch_size=bs, sync_dist=True)
            update_distance_metrics(self.distance_metrics, out.predicted, batch)

    def on_validation_epoch_end(self) -> None:
        self.log_task_scores()
        if self.distance_metrics.n_sentences:
            d = self.distance_metrics.compute()
            self.log("val/uuas", d["uuas"], prog_bar=True, sync_dist=True)
            self.log("val/dspr", d["dspr"], sync_dist=True)
            self.log("val/l1", d["l1"], sync_dist=True)
            for name in ("uas", "las"):  # `heads` form: directed heads, and their labels when the data has them
                if d[name] is not None:
                    self.log(f"val/{name}", d[name], sync_dist=True)
            if d["argmax_cycle_rate"] is not None:  # `heads` form: how often argmax heads needed cycle breaking
                self.log("val/argmax_cycle_rate", d["argmax_cycle_rate"], sync_dist=True)
            if not self.row.task:  # predictor pre-training: the model is chosen on UUAS
                self.log("val/metric", d["uuas"], sync_dist=True)
        self.distance_metrics.reset()

    # ------------------------------------------------------------- optimiser
    def configure_optimizers(self):
        t = self.config.training
        named = list(self.model.named_parameters())
        if t.freeze_embeddings:  # h_0's tables stay as they start: no gradient, no group
            frozen = tuple(f"encoder.{prefix}" for prefix in self.model.encoder.embedding_keys)
            for n, p in named:
                if n.startswith(frozen):
                    p.requires_grad_(False)
            named = [(n, p) for n, p in named if not n.startswith(frozen)]
        # (name prefix, rate multiplier, group options), in the order of the groups after the base one; the
        # predictor has a group only when its rate differs, so checkpoints written before the setting resume
        parts: list[tuple[str, float, dict]] = [
            ("encoder.bias.", t.bias_lr_multiplier, {"weight_decay": 0.0}),
            ("head.ngrams.", t.ngram_lr_multiplier, {}),
        ]
        if t.predictor_lr_multiplier != 1.0:
            parts.insert(0, ("predictor.", t.predictor_lr_multiplier, {}))
        own = [([p for n, p in named if n.startswith(prefix)], rate, options) for prefix, rate, options in parts]
        ids = {id(p) for params, _, _ in own for p in params}
        other = [p for _, p in named if id(p) not in ids]
        if self.auxiliary is not None:  # it trains layers 1..k as the predictor does without a tower: the base rate
            other += list(self.auxiliary.parameters())
        groups = [{"params": other, "lr": t.lr}]
        groups += [{"params": params, "lr": t.lr * rate, **options} for params, rate, options in own if params]
        optimiser = torch.optim.AdamW(groups, lr=t.lr, weight_decay=t.weight_decay)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: inverse_sqrt_factor(step, t.warmup_steps))
        return {"optimizer": optimiser, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def clip_parts(self) -> list[list[torch.nn.Parameter]]:
        """The parameters clipped together with ``training.grad_clip_predictor_apart``: with a task and a
        predictor, the predictor's own weights, then every other one (encoder, task head, auxiliary parser, which
        trains layers 1..k); else all in one part."""
        everything = list(self.parameters())
        if not self.config.clips_predictor_apart or self.model.predictor is None:
            return [everything]
        predictor = list(self.model.predictor.parameters())
        ids = {id(p) for p in predictor}
        return [predictor, [p for p in everything if id(p) not in ids]]

    def configure_gradient_clipping(
        self,
        optimizer: torch.optim.Optimizer,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str | None = None,
    ) -> None:
        """Lightning's clip of one norm over every parameter, or each of ``clip_parts`` on its own norm."""
        parts = self.clip_parts()
        if gradient_clip_val and len(parts) > 1:
            for part in parts:
                torch.nn.utils.clip_grad_norm_(part, gradient_clip_val)
            return
        self.clip_gradients(optimizer, gradient_clip_val, gradient_clip_algorithm)

    # ------------------------------------------------------------ checkpoint
    def on_load_checkpoint(self, checkpoint: dict) -> None:
        """Restore this process's random-number streams (each DDP process its own), so a resumed run
        draws the same dropout masks."""
        rng = checkpoint.get("rng_states")
        if isinstance(rng, list):  # one entry per process
            rng = rng[self.global_rank] if self.global_rank < len(rng) else None
        if rng:
            torch.set_rng_state(rng["torch"])
            name, keys, pos, has_gauss, cached = rng["numpy"]
            np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
            random.setstate(rng["python"])

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        """Store what rebuilding the model needs without Lightning (configs, vocabulary, labels) and the
        random-number streams of every process (for an exact resume; under DDP each process has drawn
        its own dropout masks, so all are gathered — every process runs this hook)."""
        # numpy's stub types the default (legacy=True) call as a dict; the global MT19937 state is this tuple
        state: tuple[str, np.ndarray, int, int, float] = np.random.get_state()  # type: ignore[assignment]
        name, keys, pos, has_gauss, cached = state
        numpy_state = (name, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(cached))
        states = [{"torch": torch.get_rng_state(), "numpy": numpy_state, "python": random.getstate()}]
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            mine, states = states[0], [None] * torch.distributed.get_world_size()
            torch.distributed.all_gather_object(states, mine)
        checkpoint["rng_states"] = states
        checkpoint["parserfree"] = {
            "format": CHECKPOINT_FORMAT,
            "experiment": self.config.to_dict(),
            "encoder": self.encoder_config.to_dict(),
            "predictor": self.predictor_config.to_dict() if self.predictor_config else None,
            "vocab": self.vocab.to_dict(),
            "label_names": self.label_names,
            "dep_labels": list(self.dep_labels),
            "task": self.task,
            "recipe": self.recipe,
        }
