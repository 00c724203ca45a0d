"""Offline tiktoken encodings, built from the verified BPE files of the `bpe-openai` wheel.

`tiktoken.get_encoding("o200k_base")` downloads its vocabulary from a public blob host the first
time, which fails offline. The `bpe-openai` wheel ships the same vocabularies gzipped
(`bpe_openai/data/{o200k_base,cl100k_base}.tiktoken.gz`); decompressed, their sha256 values equal
the hashes tiktoken itself pins in `tiktoken_ext/openai_public.py`. This module:

1. decompresses them into a private cache folder (`bpe_dir()`), verifying each against the pinned
   sha256 before it is used (a file that does not match is replaced from the wheel);
2. builds `tiktoken.Encoding` objects itself (`load_encoding()`): the ranks come from the verified
   local file, and the split regex and special tokens come from tiktoken's own constructor in
   `tiktoken_ext.openai_public`, run as a private copy whose `load_tiktoken_bpe` hands back those
   local ranks (so nothing is re-typed, no module or environment variable is altered, and nothing
   is downloaded).

Nothing here imports `bpe_openai` (its import loads a Rust extension); its data files are found
through the import system without executing the package.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib
import importlib.metadata
import importlib.util
import tempfile
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import tiktoken

from dtl_notebook.agent.files import write_atomic

__all__ = [
    "PINNED_SHA256",
    "BpeFileError",
    "bpe_dir",
    "get_encoding",
    "harmony_encodings_dir",
    "load_encoding",
]

#: sha256 of the *decompressed* `.tiktoken` files, as pinned by tiktoken 0.14.0 in
#: `tiktoken_ext/openai_public.py`. `load_encoding` also checks, at construction time, that
#: tiktoken's constructor still passes these same values.
PINNED_SHA256: Final[Mapping[str, str]] = types.MappingProxyType(
    {
        "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    }
)

_BPE_PACKAGE: Final = "bpe_openai"
_BPE_DIST: Final = "bpe-openai"
_TIKTOKEN_CTOR_MODULE: Final = "tiktoken_ext.openai_public"
# Names that, if tiktoken's constructor ever referenced them, could reach the network behind
# the substituted loader's back.
_NETWORK_NAMES: Final = frozenset(
    {"read_file", "read_file_cached", "data_gym_to_mergeable_bpe_ranks", "requests", "blobfile"}
)


class BpeFileError(ValueError):
    """A BPE vocabulary file is missing, unreadable, or fails its pinned sha256 check."""


# --------------------------------------------------------------------------------------------
# BPE files on disk
# --------------------------------------------------------------------------------------------


def _wheel_data_dir() -> Path:
    """`bpe_openai/data` inside the installed wheel, found without importing the package."""
    spec = importlib.util.find_spec(_BPE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BpeFileError(
            f"package {_BPE_DIST!r} is not installed; it ships the offline BPE vocabularies "
            f"(pip install {_BPE_DIST})"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _check_name(name: str) -> str:
    if name not in PINNED_SHA256:
        raise ValueError(f"unknown encoding {name!r}; offline encodings: {sorted(PINNED_SHA256)}")
    return PINNED_SHA256[name]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_verified(path: Path, name: str) -> bytes:
    """The bytes of `path`, which must hash to the pinned sha256 of encoding `name`."""
    expected = _check_name(name)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BpeFileError(f"{path}: cannot read the {name} vocabulary ({e})") from e
    actual = _sha256(data)
    if actual != expected:
        raise BpeFileError(
            f"{path}: sha256 {actual} does not match the pinned {expected} for {name}; "
            "the file is corrupt or not the expected vocabulary (delete it, or call bpe_dir() "
            "to restore it from the bpe-openai wheel)"
        )
    return data


def _wheel_bytes(name: str) -> bytes:
    """Decompressed vocabulary `name` from the wheel, verified against the pinned sha256."""
    expected = _check_name(name)
    gz_path = _wheel_data_dir() / f"{name}.tiktoken.gz"
    try:
        data = gzip.decompress(gz_path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise BpeFileError(f"{gz_path}: cannot read the {name} vocabulary ({e})") from e
    actual = _sha256(data)
    if actual != expected:
        raise BpeFileError(
            f"{gz_path}: decompressed sha256 {actual} does not match the pinned {expected} "
            f"for {name}; reinstall {_BPE_DIST}"
        )
    return data


def _populate(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in PINNED_SHA256:
        target = directory / f"{name}.tiktoken"
        try:
            _read_verified(target, name)
        except BpeFileError:
            write_atomic(target, _wheel_bytes(name))
            _read_verified(target, name)


def _default_dir() -> Path:
    try:
        version = importlib.metadata.version(_BPE_DIST)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return Path(tempfile.gettempdir()) / f"dtl_notebook-bpe-{version}"


@functools.cache
def _default_bpe_dir() -> Path:
    directory = _default_dir()
    try:
        _populate(directory)
    except OSError:
        # The shared temp folder is not writable for us (e.g. another user created it):
        # fall back to a fresh private folder for this process.
        directory = Path(tempfile.mkdtemp(prefix="dtl_notebook-bpe-"))
        _populate(directory)
    return directory


def bpe_dir(directory: Path | None = None) -> Path:
    """A folder holding verified, decompressed `o200k_base.tiktoken` and `cl100k_base.tiktoken`.

    With no argument: the private cache folder `<tempdir>/dtl_notebook-bpe-<bpe-openai version>`
    (populated once per process). With `directory`: that folder, created if needed. Files that
    are missing or fail the pinned sha256 check are (re)written from the `bpe-openai` wheel.
    """
    if directory is None:
        return _default_bpe_dir()
    _populate(directory)
    return directory


def harmony_encodings_dir() -> Path:
    """A folder for `TIKTOKEN_ENCODINGS_BASE`: openai-harmony finds `o200k_base.tiktoken` there.

    Set the variable yourself around `load_harmony_encoding(...)`; this function changes no
    environment variable.
    """
    return bpe_dir()


# --------------------------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------------------------


def _parse_ranks(data: bytes, path: Path) -> dict[bytes, int]:
    """The `.tiktoken` format: one `base64(token) rank` pair per line."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as e:
            raise BpeFileError(f"{path}: cannot parse line {line[:80]!r}") from e
    return ranks


def _tiktoken_spec(name: str, ranks: dict[bytes, int]) -> dict[str, Any]:
    """tiktoken's own constructor for `name`, fed `ranks` instead of a download.

    The constructor is run as a copy whose global `load_tiktoken_bpe` is replaced in a private
    namespace, so the pat_str and special tokens are tiktoken's, the module stays untouched, and
    the hash tiktoken pins is checked against `PINNED_SHA256`.
    """
    module = importlib.import_module(_TIKTOKEN_CTOR_MODULE)
    ctor = getattr(module, name, None)
    if not isinstance(ctor, types.FunctionType):
        raise RuntimeError(f"{_TIKTOKEN_CTOR_MODULE} has no constructor {name}()")
    names = set(ctor.__code__.co_names)
    if "load_tiktoken_bpe" not in names or names & _NETWORK_NAMES:
        raise RuntimeError(
            f"{_TIKTOKEN_CTOR_MODULE}.{name}() no longer loads its vocabulary through "
            "load_tiktoken_bpe alone; refusing to run it (it might download)"
        )
    calls: list[str] = []

    def local_ranks(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if not url.endswith(f"/{name}.tiktoken"):
            raise RuntimeError(f"{name}() asked for unexpected vocabulary {url}")
        if expected_hash != PINNED_SHA256[name]:
            raise RuntimeError(
                f"tiktoken pins sha256 {expected_hash} for {name}, this module pins "
                f"{PINNED_SHA256[name]}; update PINNED_SHA256"
            )
        calls.append(url)
        return ranks

    private_globals = {**ctor.__globals__, "load_tiktoken_bpe": local_ranks}
    private_ctor = types.FunctionType(
        ctor.__code__, private_globals, ctor.__name__, ctor.__defaults__, ctor.__closure__
    )
    spec = private_ctor()
    if not calls or not isinstance(spec, dict):
        raise RuntimeError(f"{_TIKTOKEN_CTOR_MODULE}.{name}() did not build a spec as expected")
    return spec


def load_encoding(name: str, directory: Path) -> tiktoken.Encoding:
    """Build encoding `name` from `<directory>/<name>.tiktoken`; no caching, no network.

    Raises `BpeFileError` (naming the file) when the file is missing or fails the pinned sha256.
    """
    path = directory / f"{name}.tiktoken"
    ranks = _parse_ranks(_read_verified(path, name), path)
    spec = _tiktoken_spec(name, ranks)
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
        explicit_n_vocab=spec.get("explicit_n_vocab"),
    )


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """Encoding `name` ("o200k_base" or "cl100k_base") from `bpe_dir()`, cached per process."""
    _check_name(name)
    return load_encoding(name, bpe_dir())
