"""The facts of a machine and of an environment, and their checks (the JSON contracts)."""
