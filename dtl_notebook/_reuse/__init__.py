"""The reuse machinery behind one door: frozen values, resumable scans and walks, and memos.

A new request repeats almost all of the previous one, so the package builds each repeated
part once and finds it again: read-only JSON (`frozen`) shared between bodies, scans that
resume over a shared message prefix (`prefix`), builder walks and transcript folds resumed
where the transcript only grew (`walks`), tool items built once per definition (`items`) and
their JSON text written once (`body_text`). Every memo is a `registry.Memo`, bounded by the
one table `registry.BOUNDS`. Nothing here imports the layers above; they import from here.

    enabled(False)   # reuse off for the process (or DTL_REUSE=0): the same bytes, from scratch
    disabled()       # the same for one block of one thread
    reset()          # free every memo (also `dtl_notebook.free_caches()`)
    footprint()      # per memo: entries, bound, approximate bytes
"""

from dtl_notebook._reuse.registry import BOUNDS, Memo, active, disabled, enabled, footprint, reset

__all__ = ["BOUNDS", "Memo", "active", "disabled", "enabled", "footprint", "reset"]
