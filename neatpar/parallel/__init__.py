"""Generic parallel machinery, knowing nothing of environments: the spawn pool, its workers,
live-handle detection, side-effect-free pickling and the drop-in ParallelEvaluator."""
