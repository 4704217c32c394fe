"""A bundle is trusted only as written: altered, missing or newer-format bundles are refused by name."""

from __future__ import annotations

import pytest

from parserfree.export import BundleError, ParserFreeModel

from damage import rewrite_manifest


@pytest.mark.parametrize("name", ["model.onnx", "vocab.json", "tokenizer", "labels.json"])
def test_one_changed_byte_is_refused_naming_the_file(bundle_copy, name):
    path = bundle_copy / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(BundleError, match=f"{name}: sha256 does not match"):
        ParserFreeModel.load(bundle_copy)


def test_missing_file_is_refused(bundle_copy):
    (bundle_copy / "vocab.json").unlink()
    with pytest.raises(BundleError, match="vocab.json: file listed in the manifest is missing"):
        ParserFreeModel.load(bundle_copy)


def test_newer_format_version_is_refused(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m.update(format_version=m["format_version"] + 1))
    with pytest.raises(BundleError, match="newer"):
        ParserFreeModel.load(bundle_copy)


def test_folder_without_manifest_is_not_a_bundle(bundle_copy):
    (bundle_copy / "manifest.json").unlink()
    with pytest.raises(BundleError, match="missing manifest.json"):
        ParserFreeModel.load(bundle_copy)


def test_manifest_entry_outside_the_bundle_is_refused(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m["files"].update({"../elsewhere": "0" * 64}))
    with pytest.raises(BundleError, match="outside the bundle"):
        ParserFreeModel.load(bundle_copy)


def test_unknown_variant_is_refused(smoke_bundle):
    with pytest.raises(BundleError, match="no 'fp16' model"):
        ParserFreeModel.load(smoke_bundle[0], variant="fp16")


def test_bundle_exported_before_the_tree_outputs_is_refused_saying_to_export_again(bundle_copy, capsys):
    """A format-2 bundle (graph outputs task_output and D̂ only) cannot give heads and labels: refused in one
    line that names the re-export command, by the runtime and by `parserfree predict` alike."""
    from parserfree.commands.cli import main

    def as_format_2(manifest: dict) -> None:
        manifest.update(format_version=2, outputs=manifest["outputs"][:2])
        manifest.pop("dependency_labels")

    rewrite_manifest(bundle_copy, as_format_2)
    with pytest.raises(
        BundleError,
        match=r"format version 2 predates the predicted heads and dependency labels .*"
        r"export the checkpoint again: parserfree export --checkpoint /.*best\.ckpt",
    ):
        ParserFreeModel.load(bundle_copy)
    assert main(["predict", "--model", str(bundle_copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "export the checkpoint again" in err
