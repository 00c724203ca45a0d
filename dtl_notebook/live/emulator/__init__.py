"""The offline provider emulator: an Emulator per endpoint (`endpoint`), the request as the
model would read it (`request_view`), deterministic model policies (`policies`), replies and
streams in each provider's shape (`replies`, `stream`), and the emulator over HTTP (`server`).
"""

from dtl_notebook.live.emulator.endpoint import PATHS, REPLIES, Emulator

__all__ = ["PATHS", "REPLIES", "Emulator"]
