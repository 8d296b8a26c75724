"""Episode evaluation: what turns genomes into fitness: the episode runner, inference, env hosts and the evaluators."""
