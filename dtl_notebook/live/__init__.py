"""Layer 5: the agent loop, its transports (live, emulator, replay) and recordings."""

from dtl_notebook.live.agent import Agent, AgentEvent, Step, StepState, TurnError, TurnResult
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import KeywordPolicy, ScriptedPolicy
from dtl_notebook.live.recording import Recorder, ReplayError, ReplayTransport
from dtl_notebook.live.transport import (
    MissingKeyError,
    ProviderError,
    SDKTransport,
    emulator_transport,
    live_transport,
    redact,
)

__all__ = [
    "Agent",
    "AgentEvent",
    "Emulator",
    "KeywordPolicy",
    "MissingKeyError",
    "ProviderError",
    "Recorder",
    "ReplayError",
    "ReplayTransport",
    "SDKTransport",
    "ScriptedPolicy",
    "Step",
    "StepState",
    "TurnError",
    "TurnResult",
    "emulator_transport",
    "live_transport",
    "redact",
]
