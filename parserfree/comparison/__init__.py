"""comparison: the evidence — every model's pipeline run on the same examples, shortcut baselines, scores
and paired verdicts.

``compare`` runs the pipelines (``pipelines``: parser-fed and parser-free, from raw text) and fills a typed
report (``parserfree.reports``); ``scoring``, ``paired``, ``breakdown``, ``like_for_like``, ``parse_leak``
and ``tree_gap`` compute its verdicts and slices; ``baselines`` and ``bag_of_words`` the cheap rules;
``tree_quality`` and ``tree_scores`` the predicted trees against the parser's; ``language_model`` (its rows
``lm_rows``, its pairs judged ``zero_shot``) the masked-LM comparison; ``dev_compare`` two sets of runs on dev.
"""
