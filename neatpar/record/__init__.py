"""Everything a run leaves behind, one module per kind of file: the folder (folder.py), its
checkpoints (checkpoint.py), stats rows (stats_row.py) and their
TensorBoard events (tensorboard.py) and plots (plots.py), genome files (genomes.py) and the
winners' ONNX models (models.py); every file but the event files written atomically (atomic.py)."""
