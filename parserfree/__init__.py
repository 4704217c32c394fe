"""parserfree: syntax-biased Transformer encoders that learn their own dependency distances.

The installed package has one namespace. Its layers, lowest first, each importing only those below it:
``parserfree.encoder`` (the biased encoder, plain PyTorch) ← ``parserfree.predictor`` (the distance
predictor, plain PyTorch) ← ``parserfree.core`` (what training and serving share) ←
``parserfree.distill`` (data, the spaCy teacher, co-training with Lightning) and ``parserfree.export``
(the ONNX graph, the bundle, onnxruntime serving; nothing from distill) ← this application layer, which
nothing imports: ``reports`` ← ``comparison`` ← ``jobs`` ← ``commands`` (docs/design.md §9).

Where each package lives in the repository: the layers are folders at its root, mapped into this
namespace by setuptools (``[tool.setuptools.package-dir]`` in pyproject.toml):

    parserfree            → parserfree/   (this folder: the application)
    parserfree.core       → core/
    parserfree.encoder    → encoder/
    parserfree.predictor  → predictor/
    parserfree.distill    → distill/
    parserfree.export     → export/

so ``from parserfree.encoder import SyntaxEncoder`` reads ``encoder/model.py``. A development install
(``pip install -e ".[dev]" --config-settings editable_mode=strict``) builds that namespace as a tree of
links to the source files, which editors and type checkers follow (``build/__editable__.*``; re-run the
install after adding a module). Run from the repository root, Python finds this folder first (the root
is on ``sys.path``): ``extend_path`` below adds the installed namespace's folder, where the layer
packages are, so both work.
"""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

__version__ = "0.5.2"  # the one place the version is written: pyproject.toml reads it (CHANGELOG.md says what changed)
