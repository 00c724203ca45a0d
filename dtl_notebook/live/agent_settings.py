"""How each agent is pointed at another server (the emulator, the proxy), by its documented
settings: what the emulator and the proxy print when they start.

Claude Code: `ANTHROPIC_BASE_URL` (https://code.claude.com/docs/en/llm-gateway).
Codex: a `[model_providers.<id>]` entry with `base_url`, `wire_api = "responses"` and
`supports_websockets` (https://developers.openai.com/codex/config-reference); Codex ≥ 0.16x
ignores `OPENAI_BASE_URL`. With `supports_websockets = true` it opens the Responses WebSocket
first, which the emulator serves and the proxy relays.
Pi: `baseUrl` of a provider in `~/.pi/agent/models.json`
(https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs/models.md).
OpenCode: `provider.<id>.options.baseURL` in `opencode.json` (https://opencode.ai/docs/providers).
"""

from __future__ import annotations

PROVIDER_ID = "dtl"  # the Codex model provider these settings declare


def codex_provider(openai_base: str, websockets: bool = True) -> str:
    """Codex's `-c` value declaring a Responses provider at `openai_base` (ends in /v1)."""
    socket = "true" if websockets else "false"
    return (
        f'model_providers.{PROVIDER_ID}={{name="dtl_notebook",base_url="{openai_base}",'
        f'env_key="OPENAI_API_KEY",wire_api="responses",supports_websockets={socket}}}'
    )


def agent_settings(origin: str) -> list[tuple[str, str]]:
    """(agent, how to start it against `origin`) for the agents people run; any key is
    taken by the emulator, and the proxy forwards the one given."""
    openai_base = f"{origin}/v1"
    return [
        ("Claude Code", f"ANTHROPIC_BASE_URL={origin} claude"),
        (
            "Codex",
            f"OPENAI_API_KEY=any codex -c model_provider={PROVIDER_ID} "
            f"-c '{codex_provider(openai_base)}'",
        ),
        (
            "Pi",
            f'~/.pi/agent/models.json: {{"providers": {{"anthropic": {{"baseUrl": "{origin}"}}}}}}',
        ),
        (
            "OpenCode",
            "opencode.json: "
            f'{{"provider": {{"anthropic": {{"options": {{"baseURL": "{openai_base}"}}}}}}}}',
        ),
        ("openai SDK", f"OPENAI_BASE_URL={openai_base}"),
        ("anthropic SDK", f"ANTHROPIC_BASE_URL={origin}"),
    ]


def settings_lines(origin: str) -> list[str]:
    width = max(len(agent) for agent, _ in agent_settings(origin))
    return [f"  {agent:<{width}}  {how}" for agent, how in agent_settings(origin)]
