"""An MCP stdio server that hangs: it never answers `initialize` (argument "initialize"), or
answers it and never answers `tools/list` ("tools/list"). It speaks the older revision only: a
client's `server/discover` probe (2026-07-28) gets "method not found", as from any server of
that revision. Plain JSON-RPC lines over stdio, the MCP stdio framing."""

from __future__ import annotations

import json
import sys


def main() -> None:
    hang_at = sys.argv[1]
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}), flush=True)
            continue
        if request.get("method") != "initialize" or hang_at == "initialize":
            continue  # never answered: the client's timeout is what ends this
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hanging", "version": "0"},
        }
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)


if __name__ == "__main__":
    main()
