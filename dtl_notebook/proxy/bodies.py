"""Bodies fit to keep: decoded from their content-encoding (gzip, deflate, br, zstd), at most
a limit of bytes each, or the reason they could not be.

Decoding happens on the store's thread, never on the forwarding path, which relays the bytes
as they came. The limit holds against a small body that decodes to a huge one.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Decoded:
    data: bytes
    cut: bool = False  # it decoded to more than the limit: the rest was dropped
    problem: str | None = None  # why it could not be decoded (then `data` is empty)


def _inflate(body: bytes, limit: int, raw_too: bool = False) -> tuple[bytes, bool]:
    error: zlib.error | None = None
    # gzip or zlib (auto); for `deflate` then raw deflate, which some servers send instead
    for wbits in (47, -15) if raw_too else (47,):
        try:
            inflater = zlib.decompressobj(wbits)
            return inflater.decompress(body, limit), bool(inflater.unconsumed_tail)
        except zlib.error as exc:
            error = error or exc
    raise ValueError(str(error))


def _module(names: tuple[str, ...], package: str) -> Any:
    """The first of `names` that imports (imported on first use: most answers are plain)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"the {package} package is not installed (pip install {package})")


def _unbrotli(body: bytes, limit: int) -> tuple[bytes, bool]:
    decompressor = _module(("brotli",), "brotli").Decompressor()
    plain = decompressor.process(body, output_buffer_limit=limit + 1)
    return plain[:limit], len(plain) > limit or not decompressor.can_accept_more_data()


def _unzstd(body: bytes, limit: int) -> tuple[bytes, bool]:
    # in the standard library from Python 3.14, backported before
    zstd = _module(("compression.zstd", "backports.zstd"), "backports.zstd")
    decompressor = zstd.ZstdDecompressor()
    plain = decompressor.decompress(body, limit)
    return plain, not decompressor.eof and not decompressor.needs_input


_DECODERS: dict[str, Callable[[bytes, int], tuple[bytes, bool]]] = {
    "gzip": _inflate,
    "x-gzip": _inflate,
    "deflate": lambda body, limit: _inflate(body, limit, raw_too=True),
    "br": _unbrotli,
    "zstd": _unzstd,
}


def decode(body: bytes, encoding: str | None, limit: int) -> Decoded:
    """`body` undone from `encoding` (a Content-Encoding value: codings in the order they were
    applied, RFC 9110 §8.4, so undone last first), at most `limit` bytes of it."""
    codings = [c.strip().lower() for c in (encoding or "").split(",")]
    cut = False
    for coding in reversed([c for c in codings if c not in ("", "identity")]):
        decoder = _DECODERS.get(coding)
        if decoder is None:
            return Decoded(b"", problem=f"content-encoding {coding!r} is not one this proxy reads")
        try:
            body, more = decoder(body, limit)
        except Exception as exc:
            reason = f"content-encoding {coding!r} cannot be decoded: {exc}"
            return Decoded(b"", problem=reason)
        cut = cut or more
    return Decoded(body, cut)
