"""bench/serve.py's reply check: a reply is counted ok only when it is its own text's prediction."""

from __future__ import annotations

import json

from bench.lib.http_load import Reply
from bench.lib.served import Checker


def checker() -> Checker:
    made = Checker.__new__(Checker)
    made.labels = ["negative", "positive"]
    made.expected = {
        text: {"words": text.split(), "probabilities": {"negative": p, "positive": 1 - p}}
        for text, p in (("a dog barks", 0.2), ("the cats sleep", 0.7))
    }
    return made


def reply(status: int, results=None, error: str | None = None) -> Reply:
    payload = {"results": results} if error is None else {"error": error}
    return Reply(status, json.dumps(payload).encode(), 0.001)


def test_a_reply_of_another_text_or_other_numbers_is_counted_mixed_up_not_ok():
    """Catches a check that passes any 200 (a mixed-up reply would count as served right)."""
    c = checker()
    own, other = (c.expected[t] for t in ("a dog barks", "the cats sleep"))
    assert c.outcome(reply(200, [own]), ["a dog barks"]) == "ok"
    assert c.outcome(reply(200, [other]), ["a dog barks"]) == "mixed"
    shifted = {**own, "probabilities": {"negative": 0.25, "positive": 0.75}}
    assert c.outcome(reply(200, [shifted]), ["a dog barks"]) == "mixed"
    assert c.outcome(reply(200, [own]), ["a dog barks", "the cats sleep"]) == "mixed"


def test_a_bad_request_counts_only_as_a_one_line_4xx():
    """Catches a bad request answered 200 or with a multi-line error counted as handled."""
    c = checker()
    assert c.outcome(reply(400, error="malformed JSON"), None) == "4xx"
    assert c.outcome(reply(400, error="two\nlines"), None) == "wrong"
    assert c.outcome(reply(200, [c.expected["a dog barks"]]), None) == "wrong"
    assert c.outcome(Reply(0, b"", 1.0, "ConnectionResetError"), None) == "lost"
    assert c.outcome(reply(500, error="boom"), ["a dog barks"]) == "5xx"
