"""Tests of record/plots.py: fitness.png (best, mean, and a band of one standard deviation around
the mean) and species.png (each species' size stacked, 0 where it does not exist) drawn from stats
rows, with whole generations on the x axis, written atomically as real PNG files."""
import os

import numpy as np
from PIL import Image

from neatpar.record.plots import fitness_figure, plot, species_figure
from neatpar.record.stats_row import StatsRow


def row(generation: int, best: float, mean: float, stdev: float, sizes: dict[int, int]) -> StatsRow:
    return StatsRow(generation=generation, best_fitness=best, mean_fitness=mean, stdev_fitness=stdev,
                    species=len(sizes), episodes=8, scored_steps=80, scored_steps_per_s=1.0, agent_steps=80,
                    seconds=1.0, mean_return=None, mean_episode_length=None, mean_nodes=3.0, mean_connections=4.0,
                    species_sizes=sizes)


ROWS = [row(0, 1.0, 0.5, 0.25, {1: 6, 2: 2}), row(1, 2.0, 1.0, 0.5, {1: 4, 2: 3, 3: 1}),
        row(2, 3.5, 2.0, 1.0, {2: 5, 3: 3})]


def test_the_fitness_figure_draws_best_mean_and_the_band_of_one_deviation():
    axes = fitness_figure(ROWS).axes[0]
    lines = {line.get_label(): line.get_xydata().tolist() for line in axes.lines}
    assert lines == {"best": [[0, 1.0], [1, 2.0], [2, 3.5]], "mean": [[0, 0.5], [1, 1.0], [2, 2.0]]}
    (band,) = axes.collections
    edge = band.get_paths()[0].vertices
    for generation, mean, stdev in ((0, 0.5, 0.25), (1, 1.0, 0.5), (2, 2.0, 1.0)):
        ys = edge[edge[:, 0] == generation][:, 1]
        assert np.isclose(ys.min(), mean - stdev) and np.isclose(ys.max(), mean + stdev)
    assert all(float(t).is_integer() for t in axes.get_xticks())   # whole generations


def test_the_species_figure_stacks_each_species_from_its_first_generation_to_its_last():
    bands = species_figure(ROWS).axes[0].collections
    assert len(bands) == 3                                          # one per species that ever lived
    tops = [max(y for x, y in band.get_paths()[0].vertices if x == generation)
            for band in bands[-1:] for generation in (0, 1, 2)]
    assert tops == [8, 8, 8]                                        # stacked, the sizes add up
    first = bands[0].get_paths()[0].vertices
    assert max(y for x, y in first if x == 2) == 0                  # species 1 is gone in generation 2


def test_the_species_figure_of_no_rows_is_an_empty_plot():
    assert len(species_figure([]).axes[0].collections) == 0


def test_plot_writes_both_pngs_and_nothing_else(tmp_path):
    paths = plot(ROWS, str(tmp_path))
    assert paths == [str(tmp_path / "fitness.png"), str(tmp_path / "species.png")]
    for path in paths:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width > 100 and image.height > 100
    assert sorted(os.listdir(tmp_path)) == ["fitness.png", "species.png"]   # no temporary file left
