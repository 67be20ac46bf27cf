"""MCP tools over stdio (`tempera-mcp`): the explicit fallback to the hooks. The entry point is `server.main`."""
