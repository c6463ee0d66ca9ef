"""Security: which origins a browser may reach, host names as browsers read them, secrets and every spelling of them, masking, private folders.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""
