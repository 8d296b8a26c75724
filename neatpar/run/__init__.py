"""A run: its plan, its lifecycle from the run folder's claim to the winner's files, its records
while it runs (checkpoints, stats, clips) and its interrupts; started by `neatpar evolve` or by
`neatpar.evolve()` / `neatpar.resume()` (start.py)."""
