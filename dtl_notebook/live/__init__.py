"""Layer 5: running turns against real providers or the in-process emulator."""

from dtl_notebook.live.agent import Agent, AgentEvent, Step, StepState, TurnError, TurnResult
from dtl_notebook.live.catalog import demo_catalog
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.policies import KeywordPolicy, ScriptedPolicy
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
    "demo_catalog",
    "emulator_transport",
    "live_transport",
    "redact",
]
