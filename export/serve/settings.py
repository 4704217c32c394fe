"""The server's settings and limits, one home for their defaults (``parserfree serve`` options, the app)."""

MAX_BATCH = 32  # texts in one model batch (--max-batch)
MAX_WAIT_MS = 5.0  # longest a batch waits to fill under load (--max-wait-ms)
# Texts per graph call within a batch (--graph-batch). A batch of concurrent requests holds texts of every
# length; sorted and run in calls of 8 they pad far less than in one call of 32 (docs/serving.md, "Speed").
GRAPH_BATCH = 8
MAX_TEXTS = 256  # texts in one request (--max-texts; 413 above)
MAX_BODY = 1_000_000  # bytes of one request body (--max-body-bytes; 413 above)
MAX_CHARS = 100_000  # characters of one text (413 above)
