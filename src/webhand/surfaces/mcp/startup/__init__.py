"""A stdio server's first messages, answered before the MCP SDK and the tool catalog are imported.

Importing the official SDK costs about half a second of CPU, and the catalog more: paid before
the first answer, it would stand between a host's first call and its first page. So ``webhand
mcp`` over stdio owns the client's pipe from its first byte (``wire``), answers ``initialize``
as soon as it is read (``handshake``), and serves the first ``tools/list`` and ``tools/call``
with the JSON the SDK would write (``early``), while the SDK and the browser load beside it.

Its responsibility ends at the hand-over: at the first line it does not serve exactly as the SDK
would, or once the SDK is loaded, that line and every later one go to the SDK
(``surfaces/mcp/stdio.py`` runs it on ``wire``'s ``SdkInput``/``SdkOutput``), which owns the
MCP session from then on. Nothing here may import the SDK; ``handshake`` imports only the standard
library.
"""
