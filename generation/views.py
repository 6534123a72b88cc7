"""Pages of the generation app (model endpoints, jobs, calls)."""
