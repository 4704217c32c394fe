"""The benchmark helpers (bench/*.py) are scripts' modules, not part of the package: their tests import them
from the bench folder, as the scripts do (a script's own folder is first on its path)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
