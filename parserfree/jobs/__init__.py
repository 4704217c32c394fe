"""jobs: what trains and records end to end — the main job and its stages, the low-resource curve, shipping
a pre-training, and exporting a checkpoint with its own held-out data.

Each stage keeps a record of what it was built from (``stage_records``), so a re-run skips, resumes or
rebuilds it (``stages``); ``main_job`` chains them into ``parserfree run``.
"""
