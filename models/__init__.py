"""The shipped models: pre-trained weights with their records, one folder each (``models/<name>/``).

Data, not code: ``parserfree.distill.shipped`` reads them (``builtin:<name>``), ``parserfree ship`` writes
them; ``models/README.md`` lists them.
"""
