"""One plotting function per figure, grouped by chapter; each returns a matplotlib Figure."""
