"""Anthropic's prompt-caching limits, as numbers every layer reads (the validator, the request
builder, the lint, the analyzer and the finding words): a module of its own, importing
nothing, so the `codes` command can name them without loading the request types.
https://docs.claude.com/en/docs/build-with-claude/prompt-caching
"""

# At most 4 cache breakpoints per request. The API counts blocks carrying cache_control wherever
# they sit, a block nested in a tool_result included ("A maximum of 4 blocks with cache_control
# may be provided. Found 5."), and automatic caching's top-level cache_control takes a slot.
MAX_CACHE_BREAKPOINTS = 4
# a cache read walks back at most 20 blocks from a breakpoint
LOOKBACK_BLOCKS = 20
