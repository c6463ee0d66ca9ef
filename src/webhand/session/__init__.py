"""Browser sessions: one per (conversation, name), created on first use, closed when idle."""
