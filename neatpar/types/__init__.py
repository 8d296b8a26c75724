"""The records every layer reads, at the bottom of the stack (they import nothing of neatpar but
its errors): what a behavior observes and does and what an environment reports each step
(environment.py, the runner's seam), what a generation cost and saw (stats.py), what an evaluator
carries between generations (run_state.py) and the genome file format (genome_file.py)."""
