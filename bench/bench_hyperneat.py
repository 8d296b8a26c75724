"""Benchmark: HyperNEAT on an 84 x 84 x 1 image substrate (7,056 inputs -> 16 hidden -> 5 outputs,
112,976 weights), measured in one run:

(a) phenotypes: a population of 150 CPPNs (neat-python genomes, each mutated on its own by
    neat-python's operators) queried over every node pair by neatpar's C query
    (hyperneat.build_blocks, one thread and one per CPU), against PUREPLES-style construction:
    one neat-python FeedForwardNetwork.activate per weight with query_cppn's threshold and scaling,
    the network's node_evals built as create_phenotype_network builds them. The baseline is
    measured on a few genomes spread over the population and scaled to 150 per genome; its weights
    are checked to equal neatpar's bit for bit.
(b) one step of 256 agents, each driven by its own substrate network: SubstratePopulation.activate
    against a numpy loop per agent (x @ W + b and the activation per layer); and the same at 16
    and 64 agents, and 256 agents over 150 genomes (as a run plays them).

Usage: python bench/bench_hyperneat.py [--baseline-genomes N] [--seed S]
"""
import argparse
import os
import random
import statistics
import tempfile
import time

import neat
import numpy as np

from neatpar.processes import cpu_count
from neatpar.nn.hyperneat import build_blocks, compile_cppns, phenotype_of
from neatpar.nn.substrate import IOShapes, make_substrate
from neatpar.nn.substrate_population import SubstratePopulation
from realistic_genomes import config_text

# CPPNs: HyperNEAT's usual functions, 5 inputs (a 2-D substrate's pair of nodes and 1.0), one output.
CPPN_KEYS = {"num_inputs": 5, "num_outputs": 1, "conn_add_prob": 0.5, "activation_default": "sigmoid",
             "activation_options": "sigmoid gauss sin tanh abs identity", "activation_mutate_rate": 0.3}

# CPPN populations: hidden nodes before pruning and extra links drawn per genome.
POPULATIONS = {"first generation": ((0, 0), (0, 0)), "evolved (2-8 hidden)": ((2, 8), (0, 10)),
               "large (10-20 hidden)": ((10, 20), (10, 30))}


def cppns(count: int, seed: int, hidden: tuple, extra_links: tuple):
    """(config, genomes): neat-python's first generation, each genome mutated on its own until it
    has a number of hidden nodes drawn from `hidden`, plus extra links drawn from `extra_links`."""
    folder = tempfile.mkdtemp(prefix="neatpar-bench-")
    path = os.path.join(folder, "cppn.cfg")
    with open(path, "w") as f:
        f.write(config_text(count, **CPPN_KEYS))
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         path)
    os.remove(path)
    os.rmdir(folder)
    genomes = list(neat.Population(config, seed=seed).population.values())[:count]
    rng = random.Random(seed)
    for genome in genomes:
        target = rng.randint(*hidden)
        while len(genome.nodes) - 1 < target:
            genome.mutate(config.genome_config)
        for _ in range(rng.randint(*extra_links)):
            genome.mutate_add_connection(config.genome_config)
    return config, genomes


# ---------------------------------------------------------------- PUREPLES-style construction

def query_cppn(coord1, coord2, outgoing, cppn, max_weight=5.0):
    """PUREPLES' query_cppn (pureples/hyperneat/hyperneat.py), as it is written."""
    if outgoing:
        i = [coord1[0], coord1[1], coord2[0], coord2[1], 1.0]
    else:
        i = [coord2[0], coord2[1], coord1[0], coord1[1], 1.0]
    w = cppn.activate(i)[0]
    if abs(w) > 0.2:
        if w > 0:
            w = (w - 0.2) / (1.0 - 0.2)
        else:
            w = (w + 0.2) / (1.0 - 0.2)
        return w * max_weight
    return 0.0


def pureples_network(genome, config, layers: list, activation):
    """create_phenotype_network's work on a layered substrate: per target node, find_neurons over
    the previous layer (one query_cppn per pair, links of nonzero weight), then the network."""
    cppn = neat.nn.FeedForwardNetwork.create(genome, config)
    first = np.cumsum([0] + [len(layer) for layer in layers]).tolist()
    node_evals = []
    for k in range(len(layers) - 1):
        for t, target in enumerate(layers[k + 1]):
            im = []
            for s, source in enumerate(layers[k]):
                w = query_cppn(target, source, False, cppn)
                if w != 0.0:
                    im.append((first[k] + s, w))
            node_evals.append((first[k + 1] + t, activation, sum, 0.0, 1.0, im))
    return neat.nn.FeedForwardNetwork(list(range(first[1])), list(range(first[-2], first[-1])), node_evals)


def check_equal(net, block, substrate) -> None:
    """The baseline's weights are neatpar's, bit for bit."""
    phenotype = phenotype_of(block, substrate)
    first = np.cumsum([0] + list(substrate.sizes)).tolist()
    for node, _, _, _, _, links in net.node_evals:
        k = next(k for k in range(len(first) - 1) if first[k + 1] <= node < first[k + 2])
        dense = np.zeros(substrate.sizes[k])
        for source, w in links:
            dense[source - first[k]] = w
        assert np.array_equal(dense, phenotype.weights[k][:, node - first[k + 1]]), "baseline and neatpar disagree"


def best_times(functions: list, repeats: int) -> list:
    """The best time of each function, their runs interleaved (a busy machine slows them alike)."""
    best = [float("inf")] * len(functions)
    for _ in range(repeats):
        for k, fn in enumerate(functions):
            start = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def phenotypes(substrate, args) -> None:
    layers = [[tuple(node) for node in layer.tolist()] for layer in substrate.layers]
    activation = neat.activations.tanh_activation
    threads = cpu_count()
    print(f"(a) phenotypes of 150 CPPNs: {substrate.sizes[0]:,} -> {substrate.sizes[1]} -> {substrate.sizes[2]} "
          f"substrate, {sum(a * b for a, b in zip(substrate.sizes, substrate.sizes[1:])):,} weights per genome")
    print(f"    PUREPLES-style baseline measured on {args.baseline_genomes} genomes spread over the population, "
          f"scaled to 150\n")
    print(f"| CPPNs | nodes (median) | links (median) | neatpar, 1 thread | neatpar, {threads} threads | "
          f"PUREPLES-style | vs 1 thread | vs {threads} threads |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (hidden, extra) in POPULATIONS.items():
        config, genomes = cppns(150, args.seed, hidden, extra)
        tables = compile_cppns(genomes, config, substrate)
        one, many = best_times([lambda: build_blocks(tables, range(150), substrate, threads=1),
                                lambda: build_blocks(tables, range(150), substrate, threads=threads)], 3)
        sample = np.linspace(0, 149, args.baseline_genomes).astype(int).tolist()
        blocks = build_blocks(tables, sample, substrate)
        per_genome = []
        for g, block in zip(sample, blocks):
            start = time.perf_counter()
            net = pureples_network(genomes[g], config, layers, activation)
            per_genome.append(time.perf_counter() - start)
            check_equal(net, block, substrate)
        baseline = statistics.mean(per_genome) * 150
        print(f"| {name} | {int(np.median(tables.node_counts))} | {int(np.median(tables.link_counts))} | "
              f"{one:.3f} s | {many:.3f} s | {baseline:.1f} s | {baseline / one:.0f}x | {baseline / many:.0f}x |")
    population = SubstratePopulation.create(genomes, config, substrate)
    compile_time, = best_times([lambda: SubstratePopulation.create(genomes, config, substrate)], 3)
    population.build()
    print(f"\ncompiling 150 CPPNs with their keys: {compile_time * 1e3:.1f} ms; phenotypes held: "
          f"{population.phenotype_bytes / 1e6:.1f} MB ({substrate.parameters * 8:,} bytes per genome)\n")


def numpy_step(weights: list, x: np.ndarray) -> list:
    """A numpy loop per agent: x @ W + b and neat-python's tanh (tanh(clamp(2.5 z))) per layer."""
    out = []
    for agent, phenotype in enumerate(weights):
        v = x[agent]
        for w, b in zip(phenotype.weights, phenotype.biases):
            v = np.tanh(np.clip(2.5 * (b + v @ w), -60.0, 60.0))
        out.append(v)
    return out


def steps(substrate, args) -> None:
    config, genomes = cppns(256, args.seed, *POPULATIONS["evolved (2-8 hidden)"])
    population = SubstratePopulation.create(genomes, config, substrate)
    population.build()
    rng = np.random.default_rng(0)
    x = rng.random((256, substrate.num_inputs))
    print("(b) one step, every agent's substrate network (7,056 -> 16 -> 5)\n")
    print("| agents | genomes | neatpar | numpy loop per agent | vs numpy |")
    print("|---|---|---|---|---|")
    for agents, count in ((16, 16), (64, 64), (256, 256), (256, 150)):
        index = np.arange(agents) % count
        weights = [population.phenotype(int(g)) for g in index]
        ours, theirs = best_times([lambda: population.activate(x[:agents], index),
                                   lambda: numpy_step(weights, x[:agents])], 15)
        assert np.allclose(population.activate(x[:agents], index), numpy_step(weights, x[:agents]), rtol=0, atol=1e-9)
        print(f"| {agents} | {count} | {ours * 1e3:.2f} ms | {theirs * 1e3:.2f} ms | {theirs / ours:.2f}x |")
    weights = 256 * substrate.parameters * 8 / 1e6
    print(f"\nweights read per step at 256 agents of their own: {weights:.0f} MB (float64)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-genomes", type=int, default=3, help="genomes the PUREPLES-style baseline builds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    substrate = make_substrate(IOShapes(((84, 84, 1),), 5), "16")
    print(f"{cpu_count()} CPUs\n")
    phenotypes(substrate, args)
    steps(substrate, args)


if __name__ == "__main__":
    main()
