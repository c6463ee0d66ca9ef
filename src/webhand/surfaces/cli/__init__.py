"""The ``webhand`` command: its entry point and forwarding to the daemon, the commands, the daemon,
exporting and replaying a session's history, doctor and demo."""
