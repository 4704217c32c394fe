"""The bundle folder, its manifest and the manifest's seal: what an export writes and what the runtime checks.

The hand-off from export to inference. A bundle holds the ONNX model(s) — the task graph
(``model.onnx`` and its variants: the task output only) and, for a parser-free model, the tree graph
(``tree.onnx`` and its variants: the task output, D̂, the predicted heads and labels) — ``vocab.json``,
the serialised tokenizer, ``labels.json``, ``config.yaml`` (the resolved training experiment),
``manifest.json`` — format version, graph kind, which file is which graph (``models``: the task graph per
variant, ``tree_graph.models``: the tree graph's), each graph's input/output names, the dependency label
names of a labelled graph, max_len,
package versions, the evaluation of each model variant and the sha256 of every other file (listed one by
one, recursively) — and ``manifest.sha256``,
the seal: the sha256 of the manifest's bytes (in ``sha256sum`` format, so ``sha256sum -c manifest.sha256``
checks it too). That digest covers every file through the manifest, so it is the bundle's identity.

``verify_bundle`` refuses a missing or unreadable manifest, an older format version (naming what it lacks
and the command that exports the checkpoint again) or a newer one, a broken
seal, a manifest without the fields the runtime needs (``kind``, ``models``, ...), a listed file that is
missing or whose sha256 differs, and a file in the folder that the manifest does not list — each with one
line naming the file. What this can honestly detect without a key: any corruption, and any edit of a
file or of the manifest that is not followed by recomputing the digests and the seal. Someone who
rewrites the seal too can forge a bundle; against that, pin the digest: ``verify_bundle(folder,
digest=...)`` (``parserfree predict --digest``) refuses a bundle whose seal is not the expected one.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from ..core.recipes import exportable_recipes
from ..encoder.files import checked_version, sha256_file, write_json, write_text_atomic
from .errors import BundleError

FORMAT = "parserfree-bundle"
# 2: manifest.sha256 seals the manifest; 3: a `heads` predictor's graph returns heads and labels; 4: the
# task graph returns the task output only, the tree outputs come from a tree graph of their own
FORMAT_VERSION = 4
# what each format version added, for the message that refuses an older bundle
ADDED_IN = {
    2: "the sealed manifest",
    3: "the predicted heads and dependency labels among the graph's outputs",
    4: "the tree graph of heads and labels beside a task graph that computes no labels",
}
MANIFEST = "manifest.json"
SEAL = "manifest.sha256"
MODEL_FILES = {"default": "model.onnx", "optimized": "model.optimized.onnx", "int8": "model.int8.onnx"}  # task graph
TREE_FILES = {"default": "tree.onnx", "optimized": "tree.optimized.onnx", "int8": "tree.int8.onnx"}  # tree graph
PACKAGES = ("torch", "onnx", "onnxruntime", "spacy", "numpy", "parserfree")
# fields the runtime reads, with their types
REQUIRED = {
    "kind": str,
    "task": str,
    "max_len": int,
    "n_features": int,
    "models": dict,
    "vocab": str,
    "labels": str,
    "tokenizer": dict,
    "outputs": list,
    "files": dict,
}


def bundle_files(folder: Path) -> list[str]:
    """Relative POSIX paths of the files a manifest lists: every file under ``folder`` but the manifest and its seal."""
    names = (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return sorted(n for n in names if n not in (MANIFEST, SEAL))


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of ``bundle_files``, keyed by POSIX relative path."""
    return {name: sha256_file(folder / name) for name in bundle_files(folder)}


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
    """Complete ``manifest`` with the format, versions and file digests of ``folder``; write it and its
    seal; return it."""
    full = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **manifest,
        "versions": package_versions(),
        "files": file_digests(folder),
    }
    write_json(folder / MANIFEST, full)
    write_text_atomic(folder / SEAL, f"{sha256_file(folder / MANIFEST)}  {MANIFEST}\n")
    return full


def bundle_digest(folder: str | Path) -> str:
    """The digest a bundle's seal records (sha256 of its manifest.json); BundleError without a readable seal."""
    path = Path(folder) / SEAL
    if not path.is_file():
        raise BundleError(f"{path}: missing; the manifest is unsealed (an older or altered bundle — export it again)")
    try:
        digest = path.read_text(encoding="utf-8").split()[0]
    except (UnicodeDecodeError, IndexError):
        digest = ""
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise BundleError(f"{path}: not a sha256 seal (expected '<64 hex digits>  {MANIFEST}')")
    return digest


def _check_fields(path: Path, manifest: dict) -> None:
    """The fields the runtime reads are present and well-formed (one line naming the field otherwise)."""
    for key, kind in REQUIRED.items():
        if not isinstance(manifest.get(key), kind):
            raise BundleError(f"{path}: manifest field {key!r} is missing or not a {kind.__name__}")
    if manifest["kind"] not in exportable_recipes():
        raise BundleError(
            f"{path}: manifest field 'kind' is {manifest['kind']!r}, expected one of {', '.join(exportable_recipes())}"
        )
    _check_graph(path, "", manifest["models"], manifest["outputs"])
    if not all(isinstance(manifest["tokenizer"].get(k), str) for k in ("path", "lang")):
        raise BundleError(f"{path}: manifest field 'tokenizer' must give 'path' and 'lang'")
    tree = manifest.get("tree_graph")
    if tree is not None:
        if (
            not isinstance(tree, dict)
            or not isinstance(tree.get("models"), dict)
            or not isinstance(tree.get("outputs"), list)
        ):
            raise BundleError(f"{path}: manifest field 'tree_graph' must give the tree graph's 'models' and 'outputs'")
        _check_graph(path, "tree_graph.", tree["models"], tree["outputs"])
    outputs = [*manifest["outputs"], *(tree["outputs"] if tree is not None else [])]
    if any(o["name"] == "dep_labels" for o in outputs):
        labels = manifest.get("dependency_labels")
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise BundleError(
                f"{path}: manifest field 'dependency_labels' must list the label names of the graph's dep_labels output"
            )


def _check_graph(path: Path, prefix: str, models: dict, outputs: list) -> None:
    """One graph's ``models`` name a file for 'default' and its ``outputs`` are named (one line otherwise)."""
    if "default" not in models or not all(isinstance(v, str) for v in models.values()):
        raise BundleError(f"{path}: manifest field '{prefix}models' must name a file for 'default'")
    if not all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in outputs):
        raise BundleError(f"{path}: manifest field '{prefix}outputs' must list the graph's outputs by name")


def read_manifest(folder: str | Path, digest: str | None = None) -> dict:
    """The manifest of a bundle folder, checked for format, version, seal (and the expected ``digest``
    when given) and required fields — not yet for file digests."""
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
    version = checked_version(
        manifest,
        path,
        format=FORMAT,
        what="bundle manifest",
        version_field="format_version",
        newest=FORMAT_VERSION,
        error=BundleError,
    )
    if version < FORMAT_VERSION:
        source = manifest.get("checkpoint")
        checkpoint = source.get("path") if isinstance(source, dict) else None
        again = f"parserfree export --checkpoint {checkpoint}" if isinstance(checkpoint, str) else "parserfree export"
        added = ADDED_IN.get(version + 1, "the current format")
        raise BundleError(
            f"{path}: bundle format version {version} predates {added} "
            f"(version {version + 1}; this parserfree reads {FORMAT_VERSION}); export the checkpoint "
            f"again: {again}"
        )
    sealed = bundle_digest(folder)
    if sha256_file(path) != sealed:
        raise BundleError(f"{path}: does not match its seal {SEAL} (the manifest was edited or corrupted)")
    if digest is not None and sealed != digest.lower().removeprefix("sha256:"):
        raise BundleError(
            f"{folder}: bundle digest {sealed[:16]}… is not the expected {digest[:16]}… (another or a re-sealed bundle)"
        )
    _check_fields(path, manifest)
    return manifest


def verify_bundle(folder: str | Path, digest: str | None = None) -> dict:
    """Check the manifest, its seal and the sha256 of every listed file, and that no unlisted file was
    added; return the manifest or raise BundleError. ``digest``: the bundle digest to insist on."""
    folder = Path(folder)
    manifest = read_manifest(folder, digest)
    for name, expected in manifest["files"].items():
        path = folder / name
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise BundleError(f"{folder / MANIFEST}: file entry {name!r} points outside the bundle")
        if not path.is_file():
            raise BundleError(f"{path}: file listed in the manifest is missing")
        if sha256_file(path) != expected:
            raise BundleError(f"{path}: sha256 does not match the manifest (the file was altered or corrupted)")
    for name in bundle_files(folder):
        if name not in manifest["files"]:
            raise BundleError(f"{folder / name}: not listed in the manifest (a file was added to the bundle)")
    tree = manifest.get("tree_graph") or {"models": {}}
    used = [manifest["vocab"], manifest["labels"], manifest["tokenizer"]["path"], *manifest["models"].values()]
    used += tree["models"].values()
    for name in used:
        if name not in manifest["files"]:
            raise BundleError(f"{folder / MANIFEST}: {name!r} is used but not among the hashed files")
    return manifest
