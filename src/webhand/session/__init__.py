"""Browser sessions: one per (conversation, name), created on first use, closed when idle.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""
