"""The MCP server: its tools over stdio (with the answers it gives before the browser is up) and over streamable HTTP, the handshake, the JSON-RPC checks."""
