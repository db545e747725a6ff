"""The requirement and manifest readers that check/ and project/ both use, and the problems they report."""
