"""reports: the typed comparison report and every page drawn from it.

``report`` and ``parts`` are the report's shape and JSON form; ``markdown``, ``tables``, ``quality_tables``,
``curve_tables`` and ``figures`` draw it; ``records`` keeps committed results with their commands and
``results_page`` renders docs/results.md and the README's results from them. Nothing here runs a model:
the lowest package of the application, imported by comparison, jobs and commands.
"""
