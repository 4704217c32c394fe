"""Model sizes: what ``--size`` replaces in a task's config.

A task config (``configs/main/agreement.yaml``, a user's CSV) says what is learnt and compared; a size says
with which model. ``small``, the default, is the config as it is (the project's own 64-wide encoder);
``base`` is ``configs/sizes/base.yaml``, ``student`` (the small size taught by the base model's soft
labels) ``configs/sizes/student.yaml`` and ``student-wide`` (a 128-wide student) ``student_wide.yaml``, each a flat list of ``section.key: value`` settings that replace the
task's own, as ``--set`` does (docs/usage.md, "Sizes"). The run folder's config.yaml holds the result.
"""

from __future__ import annotations

from pathlib import Path

from ..encoder.schema import ConfigError
from .yaml_files import read_yaml

# the model sizes a task runs at (--size)
SIZES = {
    "small": None,
    "base": "configs/sizes/base.yaml",
    "student": "configs/sizes/student.yaml",
    "student-wide": "configs/sizes/student_wide.yaml",
}


def size_settings(size: str) -> dict:
    """The settings a size replaces in a task config (its file's ``section.key: value`` lines, over those of
    the size file it ``extends``, as task configs do); small: none."""
    if size not in SIZES:
        raise ConfigError(f"--size {size!r} must be one of {', '.join(SIZES)}")
    if SIZES[size] is None:
        return {}
    path = Path(SIZES[size])
    settings = read_yaml(path)
    bad = [k for k in settings if not isinstance(k, str) or "." not in k]
    if bad:
        raise ConfigError(f"{path}: '{bad[0]}' is not a section.key setting")
    return settings
