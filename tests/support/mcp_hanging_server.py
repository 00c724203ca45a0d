"""An MCP stdio server that hangs: it never answers `initialize` (argument "initialize"), or
answers it and never answers `tools/list` ("tools/list"). Plain JSON-RPC lines over stdio, the
MCP stdio framing."""

from __future__ import annotations

import json
import sys


def main() -> None:
    hang_at = sys.argv[1]
    for line in sys.stdin:
        request = json.loads(line)
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
