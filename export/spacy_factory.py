"""The ``parserfree`` spaCy factory, registered through the ``spacy_factories`` entry point (pyproject.toml).

spaCy imports every factory entry point whenever it builds a pipeline, with or without this component, so
this module stays light (spaCy only): the component itself (spacy_component.py, with onnxruntime and
scipy) is imported when a pipeline adds or loads it.
"""

from spacy.language import Language

from . import FACTORY


@Language.factory(
    FACTORY, default_config={"bundle": None, "variant": "default", "threads": None, "buffer": 1024, "tree": True}
)
def make_parserfree(
    nlp: Language, name: str, bundle: str | None, variant: str, threads: int | None, buffer: int, tree: bool
):
    """spaCy factory: ``bundle`` folder (written by ``parserfree export``), model ``variant`` ("default",
    "optimized", "int8"), onnxruntime intra-op ``threads`` (None: its default), ``buffer`` docs sorted by
    length per ``nlp.pipe`` chunk, ``tree`` (False: the prediction only, no heads or sentences)."""
    from .spacy_component import ParserFreeComponent

    return ParserFreeComponent(nlp, name, bundle, variant=variant, threads=threads, buffer=buffer, tree=tree)
