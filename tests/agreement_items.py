"""Agreement candidates as the built-in corpora give them, for tests of the agreement data and of what uses it."""

from parserfree.distill.data import agreement
from parserfree.distill.data.agreement import Candidate

VERBS = [("is", "are"), ("has", "have"), ("was", "were"), ("runs", "run"), ("seems", "seem"), ("does", "do")]
SUBJECTS = {"sg": ["dog", "key", "news", "teacher", "house"], "pl": ["dogs", "keys", "people", "cats", "teachers"]}
BETWEEN = ["near the house", "of the cabinets", "that we saw", "with two cats", "here"]


def candidates(n0=1200, n1=160, n2=60, singular_share=0.73):
    """Candidates as the corpora give them: most subjects singular, varied verbs, subjects (some singular
    nouns ending in -s, some plurals not) and words between subject and verb; the nearest noun before the
    verb is an attractor (of the other number) exactly when there are attractors, the first noun the subject."""
    out = []
    for i in range(n0 + n1 + n2):
        attractors = 0 if i < n0 else 1 if i < n0 + n1 else 2
        number = "sg" if agreement.hash01(str(i), "number") < singular_share else "pl"
        subject = SUBJECTS[number][i % 5]
        sg_verb, pl_verb = VERBS[i % len(VERBS)]
        verb, flipped = (sg_verb, pl_verb) if number == "sg" else (pl_verb, sg_verb)
        middle = "" if i % 3 else BETWEEN[i % len(BETWEEN)] + " "  # two thirds adjacent, as in the corpora
        words = f"the {subject} {middle}".split()
        prefix = " ".join(words)
        distance = len(words) - 1
        attractor = {"sg": "cabinet", "pl": "cabinets"}[agreement.other_number(number)] if attractors else subject
        base = {"is": "be", "has": "have", "was": "be", "runs": "run", "seems": "seem", "does": "do"}[sg_verb]
        out.append(
            Candidate(
                f"{prefix} {verb} fine number {i}",
                f"{prefix} {flipped} fine number {i}",
                attractors,
                distance,
                "src",
                number,
                verb,
                flipped,
                len(words),
                words[-1],
                f"{prefix} will {base} fine number {i}",
                attractor,
                number if not attractors else agreement.other_number(number),
                number,
            )
        )
    return out
