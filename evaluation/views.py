"""Pages of the evaluation app (agreement, releases, runs)."""
