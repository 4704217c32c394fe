"""``encoder.static_vectors`` came after stage records and cached pre-trainings were written: at null it
computes what they did, so they stay fresh; set, it is a change that trains again."""

from parserfree.distill.config import load_config
from parserfree.distill.fingerprints import changes, without
from parserfree.jobs.stage_records import training_fingerprint


def test_static_vectors_at_null_leave_earlier_records_fresh_and_set_are_a_change():
    now = training_fingerprint(load_config("configs/smoke.yaml", []))
    before = {**now, "settings": without(now["settings"], ("encoder.static_vectors",))}
    assert "static_vectors" not in now["settings"]["encoder"] and not changes(before, now)
    with_vectors = training_fingerprint(load_config("configs/smoke.yaml", ["encoder.static_vectors=en_core_web_md"]))
    assert "settings.encoder.static_vectors (new) en_core_web_md" in changes(before, with_vectors)
