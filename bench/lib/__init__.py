"""The bench scripts' helpers (imported, never run): ``common`` (command line, texts, machine facts, records),
``flops`` (FLOPs per word), ``attainable`` (the machine's GEMM rate), ``graph_levers`` (the graph alone and
its levers), ``attention_fusion``, ``spacy_tuning`` (the parser-fed reference at its best), ``paired``
(A/B passes of graphs), ``parse_speed`` (a graph that parses, timed from raw text against spaCy),
``random_trees``."""
