"""Surfaces: MCP (mcp/), the CLI with its daemon (cli/), the dashboard (dashboard/), function-calling
schemas, and the HTTP security the MCP endpoint and the dashboard share. The tools each offers are
generated from the catalog.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""
