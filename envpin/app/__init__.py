"""The application layer, the only one commands call: one answer function for every machine (planning),
the project's policy over it, and the runs of check, fleet, matrix, lock and rendering."""
