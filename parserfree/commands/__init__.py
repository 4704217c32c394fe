"""commands: the ``parserfree`` command line — thin argument parsing over functions that tests call too.

``cli`` builds the parser and dispatches; each other module adds one family of subcommands (``export`` and
``predict``, ``data`` and ``parse``, ``results``, ``lm-compare``, ``config``). Nothing imports this package
but the entry point.
"""
