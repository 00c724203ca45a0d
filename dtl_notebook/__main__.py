"""`python -m dtl_notebook`: the demo on the offline emulator, provider by provider, printed."""

from __future__ import annotations

from dtl_notebook.live.agent import Agent
from dtl_notebook.live.demos import DEMO_MODELS, DEMO_TURNS, demo_session


def main() -> None:
    session = demo_session()
    print(f"{len(session.registry)} tools registered, active: {session.active_tools}\n")
    for provider, model in DEMO_MODELS.items():
        agent = Agent(demo_session(), provider, model)
        print(f"== {provider} ({model}, emulated, not an LLM)")
        for turn in DEMO_TURNS:
            result = agent.run(turn)
            print(f"  user: {turn}")
            for step in result.steps:
                calls = ", ".join(c.name for c in step.reply.message.tool_calls) or "answer"
                loads = "; ".join(f"{lp.tools} at {lp.path}" for lp in step.request.load_points)
                brk = step.cache.cache_break
                print(
                    f"    {step.request.mode:>16}  {calls:<22} cached {step.cache.cached_tokens:>5}"
                    f"/{step.cache.total_tokens:<5}"
                    + (f"  cache break: {brk}" if brk else "")
                    + (f"  loads: {loads}" if loads and step is result.steps[-1] else "")
                )
            print(f"  model: {(result.text or result.stopped or '')[:110]}")
        print()


if __name__ == "__main__":
    main()
