"""The benchmarks: scripts run from the repository root as ``python -m bench.NAME``, and the helpers they share.

The layout is the rule:

- a module directly in ``bench/`` is a **script**: it defines ``arguments()`` (its command line, built by
  ``bench.lib.common.script_arguments``), ``main(argv)`` (runs it and writes its record) and, where it
  draws tables, ``tables(result)`` — what it prints and what bench/README.md shows of its record. A script
  imports the library and ``bench.lib``, never another script;
- ``bench/lib/`` holds the **helpers** (the shared command line, texts, machine facts and records in
  ``common``; FLOP counts, the attainable rate, graph levers, …): imported by scripts, never run.

Every script writes its result as a record (command, date, commit, the machine's CPU flags and type, the
payload): to ``bench/results/NAME.json`` (scratch, not committed), or with ``--record`` to
``docs/bench/NAME-<machine type>.json`` to be committed. One script measures nothing: ``python -m
bench.readme`` renders bench/README.md's tables from those records, each drawn by its script's ``tables``
(``--check``: say whether the page is current; ``tests/bench/test_readme.py`` does).
This package is not installed with ``parserfree``: run it from the repository root (``python -m`` puts the
root on the path; pytest's ``pythonpath`` does the same for ``tests/bench``).
"""
