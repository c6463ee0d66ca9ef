"""Surfaces: MCP, CLI, daemon, function-calling schemas. Each is generated from the catalog."""
