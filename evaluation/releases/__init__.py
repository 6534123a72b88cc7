"""Gold releases: splits, frozen records, the dataset card, and exports."""
