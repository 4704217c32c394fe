"""distill: data, the spaCy teacher, tree distances and co-training (the teacher side of parserfree)."""
