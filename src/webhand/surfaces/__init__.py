"""Surfaces: MCP (mcp/), the CLI with its daemon (cli/), the dashboard (dashboard/), function-calling
schemas, and the HTTP security the MCP endpoint and the dashboard share. The tools each offers are
generated from the catalog."""
