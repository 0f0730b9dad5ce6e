"""`engramory mcp`: a stdio MCP server over a memory store, for hosts with no pre-write hook
(Claude Desktop, Zed's agent, any MCP client). Three tools in the vocabulary of Anthropic's
memory tool (paths under /memories); every write goes through the curation library, so the
caps, the note rules and the journal hold by construction. Standard library only.

protocol: JSON-RPC 2.0 over stdio (framing, negotiation, errors); tools: the three tools,
their schemas and results; view: what memory_view shows; edit: memory_edit's five commands;
paths: /memories/... to the store and what is out of reach; wiring: the installers' entry.
"""
