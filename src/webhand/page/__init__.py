"""How a page is seen: snapshots with refs, readable text, annotated screenshots.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""
