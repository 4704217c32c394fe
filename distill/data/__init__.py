"""distill.data: the datasets — readers, pinned source archives, the built-in registry and what is built from
the built-in text (agreement items, silver trees, static vectors).

Data sits apart from training: nothing here imports the training modules of ``parserfree.distill``
(co-training, the data module, checkpoints, configs of a run; tests/test_layers.py). It may use the spaCy
teacher (``distill.teacher``, ``distill.parse_cache``, ``distill.cluster``), which tags the built-in text, and
what training and serving share (``parserfree.core``: the tree checks of a treebank file's heads). It is a subpackage of ``distill`` rather than a
package of its own because spaCy lives in ``distill/`` (the import layers of docs/design.md §9).
"""
