"""The bundle folder and its manifest: what an export writes and what the runtime checks before trusting it.

The hand-off from export to inference. A bundle holds the ONNX model(s), ``vocab.json``, the serialised
spaCy tokenizer, ``labels.json``, ``config.yaml`` (the resolved training experiment) and ``manifest.json``:
format version, graph kind, input/output names, max_len, package versions and the sha256 of every other
file (listed one by one, recursively). ``verify_bundle`` refuses a missing manifest, a newer format
version, a missing file or a file whose sha256 differs (the message names the file).
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from parserfree.encoder.files import sha256_file, write_json
from parserfree.export.errors import BundleError

FORMAT = "parserfree-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MODEL_FILES = {"default": "model.onnx", "optimized": "model.optimized.onnx", "int8": "model.int8.onnx"}
PACKAGES = ("torch", "onnx", "onnxruntime", "spacy", "numpy", "parserfree")


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` except the manifest, keyed by POSIX relative path, sorted."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in files}


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that wrote (or read) the bundle; None when not installed."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_manifest(folder: Path, manifest: dict) -> dict:
    """Complete ``manifest`` with the format, versions and file digests of ``folder``; write and return it."""
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest,
            "versions": package_versions(), "files": file_digests(folder)}
    write_json(folder / MANIFEST, full)
    return full


def read_manifest(folder: str | Path) -> dict:
    """The manifest of a bundle folder, checked for format and version (not yet for file digests)."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise BundleError(f"{folder}: no such bundle folder")
    if not path.is_file():
        raise BundleError(f"{folder}: not a parserfree bundle (missing {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BundleError(f"{path}: unreadable manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{path}: not a parserfree bundle manifest (format field missing or different)")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BundleError(f"{path}: bundle format version {version!r} is newer than this parserfree reads "
                          f"({FORMAT_VERSION}); upgrade parserfree to load it")
    if not isinstance(manifest.get("files"), dict):
        raise BundleError(f"{path}: manifest lists no files")
    return manifest


def verify_bundle(folder: str | Path) -> dict:
    """Check the manifest and the sha256 of every listed file; return the manifest or raise BundleError."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    for name, expected in manifest["files"].items():
        path = folder / name
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise BundleError(f"{folder / MANIFEST}: file entry {name!r} points outside the bundle")
        if not path.is_file():
            raise BundleError(f"{path}: file listed in the manifest is missing")
        if sha256_file(path) != expected:
            raise BundleError(f"{path}: sha256 does not match the manifest (the file was altered or corrupted)")
    return manifest
