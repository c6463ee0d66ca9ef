"""The ``webhand`` command: its entry point and forwarding to the daemon, the commands, the daemon, doctor and demo."""
