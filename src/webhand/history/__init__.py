"""History: what a session did (its log and its recorded calls), exported as a script or steps, and replayed."""
