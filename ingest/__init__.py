"""Sources → parse → chunk → embed (dense + sparse) → index."""
