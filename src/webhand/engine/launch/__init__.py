"""Launching Chromium on this machine: finding its binary, starting it in its own process group,
starting one ahead of need, remembering a stdio server's launch, finding the browsers already
running with a DevTools port, and reaping what is left behind.

What a driver does with a browser once it runs is its own folder's (``cdp/``, ``pw/``); where a
session's browser comes from when it is not launched here (a pool of remote endpoints) is
``engine/pool.py``. Firefox is launched by its own driver (``bidi/firefox.py``).
"""
