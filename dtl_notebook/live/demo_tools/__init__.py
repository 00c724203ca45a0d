"""Implementations of the demo catalog's tools (see `dtl_notebook.live.catalog`).

One module per namespace holds that domain's behaviour; `fakes`, `timekeeping`, `places`,
`money` and `business` hold what several domains share, `world` the state of one catalog, and
`tables` the fake data read from data/demo_world.json. Implementations are deterministic: fake
data comes from a stable hash of the arguments, never from a clock or an unseeded random
generator. `builders.implementations()` binds every tool to a fresh `_World`, so two catalogs
never share state.
"""
