"""Drives `lexrun mcp` with the official MCP client SDK, as an orchestrator would.

Reads a scenario (JSON) on standard input:
  {"exe": ..., "cwd": ..., "env": {...}, "roots": [folders] or null,
   "calls": [{"tool": name, "args": {...}, "progress": bool, "cancel_after": seconds}
             | {"read": uri} | {"list_resources": true}]}
and prints one JSON object: the tools listed (name, input schema) and, for each call, whether
it is an error, its structured content, its text, and the progress messages that arrived.
A call that fails at the protocol level is reported with its error message.
"""
import asyncio
import json
import sys
from pathlib import Path

import mcp
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(s):
    params = StdioServerParameters(
        command=s["exe"], args=["mcp"], env=s.get("env") or {}, cwd=s["cwd"]
    )
    roots_cb = None
    if s.get("roots") is not None:
        async def roots_cb(ctx):
            return types.ListRootsResult(
                roots=[types.Root(uri=Path(r).resolve().as_uri()) for r in s["roots"]]
            )
    out = {"tools": [], "calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots_cb) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            listed = await session.list_tools()
            out["tools"] = [{"name": t.name, "input_schema": t.input_schema} for t in listed.tools]
            last_run = None  # "LAST" in a resource URI stands for the last run's id
            for c in s["calls"]:
                if "read" in c or "list_resources" in c:
                    r = {}
                    try:
                        if "read" in c:
                            res = await session.read_resource(c["read"].replace("LAST", last_run or "LAST"))
                            r["contents"] = [
                                {"uri": str(x.uri), "mime_type": x.mime_type, "text": getattr(x, "text", None)}
                                for x in res.contents
                            ]
                        else:
                            res = await session.list_resources()
                            r["resources"] = [{"uri": str(x.uri), "name": x.name} for x in res.resources]
                    except Exception as e:
                        r["protocol_error"] = str(e)
                    out["calls"].append(r)
                    continue
                progress = []

                async def on_progress(p, total, message, progress=progress):
                    progress.append({"progress": p, "message": message})

                call = session.call_tool(
                    c["tool"],
                    c.get("args", {}),
                    progress_callback=on_progress if c.get("progress") else None,
                )
                r = {"tool": c["tool"], "progress": progress}
                try:
                    if c.get("cancel_after") is not None:
                        task = asyncio.ensure_future(call)
                        await asyncio.sleep(c["cancel_after"])
                        task.cancel()
                        try:
                            await task
                        except asyncio.CancelledError:
                            r["cancelled"] = True
                        out["calls"].append(r)
                        continue
                    res = await call
                    r["is_error"] = bool(res.is_error)
                    r["structured"] = res.structured_content
                    if isinstance(res.structured_content, dict) and res.structured_content.get("run_id"):
                        last_run = res.structured_content["run_id"]
                    r["text"] = "".join(
                        b.text for b in res.content if getattr(b, "type", "") == "text"
                    )
                except Exception as e:  # a protocol error: reported, the session goes on
                    r["protocol_error"] = str(e)
                out["calls"].append(r)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(json.load(sys.stdin)))
