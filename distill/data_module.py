"""The Lightning DataModule: cached parses → encoded examples → length-bucketed padded batches.

Between the parser teacher and the co-training module. ``prepare_data`` fetches and parses (once, on
one process); ``setup`` reads the cached parses, builds the vocabulary from the training words and the
dependency label inventory from the training labels (or takes given ones, e.g. from a pre-trained
predictor) and encodes every example. The collate pads word and feature ids and label ids and builds the
parser distance matrices D (B×T×T, pad −1) with ``core.trees``. The
training loader can stop mid-epoch and continue: it reports how far into the epoch it got to every
checkpoint, and a resumed run's loader starts at the first batch not yet trained on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, Sampler

from ..core.trees import batch_tree_distances, truncate_heads
from ..encoder import Vocabulary
from ..encoder.conventions import NO_LABEL, NO_TASK_LABEL, PAD_DISTANCE
from ..encoder.masked_words import MASKED_LM, fixed_choice, known_words
from ..encoder.vocabulary import AnyVocabulary
from ..predictor.distance_predictor import label_ids, label_inventory
from .config import ExperimentConfig
from .data.archives import default_cache_dir
from .data.datasets import SPLITS, Dataset, Example, load_dataset
from .parsing import ParsedExample, parse_dataset
from .soft_labels import check_fits, find_transfer_texts, read_soft_labels, resolve, text_key


@dataclass(frozen=True)
class EncodedExample:
    """One example ready for the collate (already truncated to the encoder's max_len)."""

    words: tuple[str, ...]
    heads: np.ndarray  # n, 0-based, root = self
    punct: np.ndarray  # n, bool
    label: float | int | None
    dep_labels: np.ndarray | None = None  # n label ids (−1: no label or one outside the inventory), None: unlabelled
    soft: np.ndarray | None = None  # C teacher logits (training.soft_labels), None: gold label only


def truncate(example: ParsedExample, max_len: int, inventory: tuple[str, ...] = ()) -> EncodedExample:
    """Cut an example to ``max_len`` words; words whose head was cut become roots (``truncate_heads``) with no
    label; the dependency labels become ids of ``inventory``."""
    n = min(len(example.words), max_len)
    cut = np.asarray(example.heads[:n]) >= n
    dep_labels = None
    if example.deps and inventory:
        dep_labels = label_ids(example.deps, inventory, n)
        dep_labels[cut] = NO_LABEL
    return EncodedExample(
        tuple(example.words[:n]),
        truncate_heads(example.heads, max_len),
        example.punct[:n].copy(),
        example.label,
        dep_labels,
    )


class BucketSampler(Sampler[int]):
    """Indices in length-bucketed order: shuffle, sort within pools of 50 batches, shuffle the batches.

    Consecutive ``batch_size`` indices form a batch of similar lengths; the order depends only on the
    seed and the epoch (``set_epoch``), so runs and resumed runs see the same batches.
    """

    def __init__(self, lengths: list[int], batch_size: int, shuffle: bool, seed: int = 0) -> None:
        self.lengths = np.asarray(lengths)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.skip = 0  # indices to leave out at the start of the next iteration only (a resumed epoch)

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose order to produce."""
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self):
        order = self.order()
        skip, self.skip = self.skip, 0
        return iter(order[skip:].tolist())

    def order(self) -> np.ndarray:
        """All indices of the current epoch, in the order they are served."""
        n = len(self.lengths)
        if not self.shuffle:
            return np.argsort(self.lengths, kind="stable")
        rng = np.random.default_rng((self.seed, self.epoch))
        order = rng.permutation(n)
        pool = self.batch_size * 50
        batches: list[np.ndarray] = []  # index arrays of batch_size (or fewer)
        for start in range(0, n, pool):
            chunk = order[start : start + pool]
            chunk = chunk[np.argsort(self.lengths[chunk], kind="stable")]
            batches.extend(chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size))
        rng.shuffle(batches)
        return np.concatenate(batches) if batches else np.zeros(0, dtype=np.int64)


class ResumableLoader(DataLoader):
    """The training DataLoader, resumable mid-epoch through Lightning's stateful-loader protocol.

    Lightning saves ``state_dict()`` — the epoch and the number of batches this loader has handed out in
    it — in every checkpoint and gives it back through ``load_state_dict`` when a run resumes. Lightning
    restores its own batch counters but would restart the epoch's iterator from the first batch, so the
    next iteration of the saved epoch skips the batches already trained on: inside the ``BucketSampler``
    (no collate for them) or, when Lightning has wrapped the sampler (DDP), by drawing and dropping them.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.position = (0, 0)  # (epoch, batches handed out in it)
        self.resume_at: tuple[int, int] | None = None

    def _epoch(self) -> int:
        return int(getattr(self.sampler, "epoch", 0))

    def state_dict(self) -> dict:
        """Where the current epoch stands (stored in checkpoints by Lightning)."""
        return {"epoch": self.position[0], "batches": self.position[1]}

    def load_state_dict(self, state: dict) -> None:
        """Continue the saved epoch at its first unseen batch (applied to the next iteration only)."""
        self.resume_at = (int(state["epoch"]), int(state["batches"]))

    def __iter__(self):
        epoch = self._epoch()
        done = self.resume_at[1] if self.resume_at is not None and self.resume_at[0] == epoch else 0
        self.resume_at = None
        skip_in_sampler = done > 0 and isinstance(self.sampler, BucketSampler)
        if skip_in_sampler:
            self.sampler.skip = done * self.batch_size
        batches = super().__iter__()
        if not skip_in_sampler:
            for _ in range(done):
                next(batches, None)
        self.position = (epoch, done)
        for batch in batches:
            self.position = (epoch, self.position[1] + 1)
            yield batch


def collate(
    examples: list[EncodedExample], vocab: AnyVocabulary, max_len: int, task: str, training: bool = False
) -> dict[str, torch.Tensor]:
    """Pad a batch: word_ids B×T, feature_ids B×T×F, mask B×T, heads B×T (−1 pad), punct B×T,
    dep_labels B×T (label ids, −1 on pad and where there is no known label), distances B×T×T (parser D,
    −1 pad, 1000 across sentences), labels B (when labelled), lm_chosen B×T (``masked_lm``, unless
    ``training``, which draws its own: the words an evaluation hides)."""
    word_ids, feature_ids, mask = vocab.encode_batch([e.words for e in examples], max_len)
    t = mask.shape[1]  # words (a subword vocabulary's word_ids are longer: B×S)
    heads = np.full((len(examples), t), PAD_DISTANCE, dtype=np.int64)
    dep_labels = np.full((len(examples), t), NO_LABEL, dtype=np.int64)
    punct = np.zeros((len(examples), t), dtype=bool)
    for b, e in enumerate(examples):
        heads[b, : len(e.heads)] = e.heads
        punct[b, : len(e.punct)] = e.punct
        if e.dep_labels is not None:
            dep_labels[b, : len(e.dep_labels)] = e.dep_labels
    batch = {
        "word_ids": torch.from_numpy(word_ids),
        "feature_ids": torch.from_numpy(feature_ids),
        "mask": torch.from_numpy(mask),
        "heads": torch.from_numpy(heads),
        "punct": torch.from_numpy(punct),
        "dep_labels": torch.from_numpy(dep_labels),
        "distances": torch.from_numpy(batch_tree_distances([e.heads for e in examples], length=t)),
    }
    if task in ("binary", "classification"):
        gold = [NO_TASK_LABEL if e.label is None else e.label for e in examples]  # None: a transfer text
        batch["labels"] = torch.tensor(gold, dtype=torch.long)
        soft = [e.soft for e in examples]
        if any(s is not None for s in soft):  # a student's batch: the teacher's logits where it has them
            width = next(s for s in soft if s is not None).shape[0]
            batch["soft_logits"] = torch.from_numpy(
                np.stack([np.zeros(width, np.float32) if s is None else s for s in soft]).astype(np.float32)
            )
            batch["has_soft"] = torch.tensor([s is not None for s in soft])
    elif task == "regression":
        batch["labels"] = torch.tensor([e.label for e in examples], dtype=torch.float32)
    elif task == MASKED_LM and not training:  # the words evaluation hides: a function of the text
        batch["lm_chosen"] = torch.from_numpy(
            fixed_choice([e.words for e in examples], known_words(batch["word_ids"]).numpy())
        )
    return batch


class SyntaxDataModule(L.LightningDataModule):
    """Data of one experiment: parses through the cache, vocabulary, label inventory, bucketed loaders per
    split. ``dep_labels``: a given label inventory (e.g. a pre-trained predictor's), else built in ``setup``."""

    def __init__(
        self,
        config: ExperimentConfig,
        cache_dir: str | Path | None = None,
        vocab: AnyVocabulary | None = None,
        progress: bool = True,
        dep_labels: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.cache_dir = Path(cache_dir or config.data.cache_dir or default_cache_dir())
        self.vocab = vocab
        self.dep_labels = None if dep_labels is None else tuple(dep_labels)
        self.progress = progress
        self.max_len = config.encoder.max_len
        self.splits: dict[str, list[EncodedExample]] = {}
        self.label_names: list[str] = []
        self.dataset: Dataset | None = None  # the examples as read (their columns), once set up

    def _parsed(self) -> dict[str, list[ParsedExample]]:
        dataset = self.dataset = load_dataset(self.config.data)
        self.label_names = dataset.label_names
        splits, _ = parse_dataset(dataset, self.config.parse, self.cache_dir, progress=self.progress)
        return splits

    def prepare_data(self) -> None:
        """Fetch the data and parse it into the cache (runs on one process; nothing to do once set up)."""
        if not self.splits:
            self._parsed()

    def setup(self, stage: str | None = None) -> None:
        """Read the cached parses, build the vocabulary from the training words and the label inventory
        from the training labels (unless given), encode every split."""
        if self.splits:
            return
        parsed = self._parsed()
        if self.vocab is None:
            self.vocab = Vocabulary.build(
                (p.words for p in parsed["train"]),
                min_freq=self.config.vocab.min_freq,
                max_size=self.config.vocab.max_size,
                n_feature_buckets=self.config.vocab.n_feature_buckets,
            )
        if self.dep_labels is None:
            self.dep_labels = label_inventory(p.deps for p in parsed["train"])
        self.splits = {s: [truncate(p, self.max_len, self.dep_labels) for p in parsed[s]] for s in SPLITS}
        if self.config.training.soft_labels:
            self.splits["train"] = self._with_soft_labels(parsed["train"])

    def _with_soft_labels(self, train: list[ParsedExample]) -> list[EncodedExample]:
        """The training examples with the teacher's logits, then the set's transfer texts (parsed through the
        cache, soft labels only); the set is refused first if it does not fit this run's data."""
        assert self.dataset is not None  # set by _parsed
        t = self.config.training
        soft = read_soft_labels(resolve(str(t.soft_labels), self.dataset.name))
        held_out = self.dataset.texts("dev", "test")
        check_fits(soft, self.dataset.name, self.label_names, [p.text for p in train], held_out, "training.soft_labels")
        logits = soft.by_key()
        texts = find_transfer_texts(soft, self.config.data, self.dataset, t.transfer_limit, "training.soft_labels")
        transfer = [Example(text, None, "transfer") for text in texts]
        parsed, _ = parse_dataset(
            Dataset("transfer", self.dataset.task, {"train": transfer, "dev": [], "test": []}, self.label_names),
            self.config.parse,
            self.cache_dir,
            progress=self.progress,
        )
        return [
            dataclasses.replace(truncate(p, self.max_len, self.dep_labels), soft=logits.get(text_key(p.text)))
            for p in [*train, *parsed["train"]]
        ]

    def examples(self, split: str) -> list[Example]:
        """A split's examples as read (text, label, columns), in the order of ``splits[split]``."""
        self.setup()
        assert self.dataset is not None  # set by setup
        return self.dataset.splits[split]

    @property
    def n_classes(self) -> int:
        """Number of classes (1 for regression or unlabeled data)."""
        return max(1, len(self.label_names))

    def _collate(self, examples: list[EncodedExample]) -> dict[str, torch.Tensor]:
        return collate(examples, self.vocab, self.max_len, self.config.data.task)

    def _collate_training(self, examples: list[EncodedExample]) -> dict[str, torch.Tensor]:
        return collate(examples, self.vocab, self.max_len, self.config.data.task, training=True)

    def loader(self, split: str, shuffle: bool = False, batch_size: int | None = None) -> DataLoader:
        """Bucketed DataLoader over one split (resumable mid-epoch when ``shuffle``, i.e. for training).

        The loader draws its workers' base seed from its own generator, not from torch's global one, so
        starting an iteration never shifts the dropout masks of training (an exact resume needs that).
        """
        examples = self.splits[split]
        size = batch_size or self.config.training.batch_size
        sampler = BucketSampler([len(e.words) for e in examples], size, shuffle, self.config.seed)
        generator = torch.Generator().manual_seed(self.config.seed)
        return (ResumableLoader if shuffle else DataLoader)(
            examples,  # type: ignore[arg-type]  # a list is a map-style dataset; torch's stub wants a Dataset
            batch_size=size,
            sampler=sampler,
            collate_fn=self._collate_training if shuffle else self._collate,
            num_workers=self.config.training.num_workers,
            generator=generator,
        )

    def train_dataloader(self) -> DataLoader:
        return self.loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self.loader("dev")

    def test_dataloader(self) -> DataLoader:
        return self.loader("test")
