"""The manifest is sealed: an edited manifest, a bundle with a file added, a manifest without the fields the
runtime reads, or a bundle other than the pinned one is refused with one line naming the file."""

from __future__ import annotations

import json
import subprocess

import pytest

from parserfree.export import BundleError, ParserFreeModel

from damage import rewrite_manifest


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(max_len=m["max_len"] * 2),  # what the runtime trusts
        lambda m: m["models"].update(default=m["models"]["int8"]),  # serve another variant as the default
        lambda m: m["parity"]["int8"].update(task_output_max_diff=0.0),  # a prettier report
    ],
)
def test_an_edited_manifest_is_refused(bundle_copy, edit):
    path = bundle_copy / "manifest.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest, indent=1))
    with pytest.raises(BundleError, match="manifest.json: does not match its seal manifest.sha256"):
        ParserFreeModel.load(bundle_copy)


def test_a_bundle_without_its_seal_is_refused(bundle_copy):
    (bundle_copy / "manifest.sha256").unlink()
    with pytest.raises(BundleError, match="manifest.sha256: missing"):
        ParserFreeModel.load(bundle_copy)


def test_the_seal_is_checkable_with_sha256sum(bundle_copy):
    done = subprocess.run(["sha256sum", "-c", "manifest.sha256"], cwd=bundle_copy, capture_output=True, text=True)
    assert done.returncode == 0 and "manifest.json: OK" in done.stdout


def test_a_file_added_to_the_bundle_is_refused(bundle_copy):
    (bundle_copy / "extra.onnx").write_bytes(b"not listed")
    with pytest.raises(BundleError, match="extra.onnx: not listed in the manifest"):
        ParserFreeModel.load(bundle_copy)


@pytest.mark.parametrize("field", ["kind", "models", "vocab", "tokenizer", "max_len"])
def test_a_resealed_manifest_without_a_field_is_one_bundle_error(bundle_copy, field):
    rewrite_manifest(bundle_copy, lambda m: m.pop(field))
    with pytest.raises(BundleError, match=f"manifest.json: manifest field '{field}' is missing"):
        ParserFreeModel.load(bundle_copy)


def test_a_resealed_manifest_pointing_at_an_unhashed_file_is_refused(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m.update(vocab="../vocab.json"))
    with pytest.raises(BundleError, match="is used but not among the hashed files"):
        ParserFreeModel.load(bundle_copy)


def test_a_pinned_digest_refuses_a_resealed_bundle(bundle_copy):
    digest = ParserFreeModel.load(bundle_copy).digest
    assert len(digest) == 64
    ParserFreeModel.load(bundle_copy, digest=digest)  # the pinned bundle loads
    rewrite_manifest(bundle_copy, lambda m: m.update(created="2000-01-01T00:00:00+00:00"))
    ParserFreeModel.load(bundle_copy)  # a consistent re-seal cannot be told apart without the pin ...
    with pytest.raises(BundleError, match="is not the expected"):
        ParserFreeModel.load(bundle_copy, digest=digest)  # ... with it, it is refused
