"""Benchmark: ES-HyperNEAT's phenotype construction for a population of 150 CPPNs (neat-python
genomes, each mutated on its own by neat-python's operators) on a substrate of 8 inputs (a line at
y = -1) and 2 outputs (y = 1), PUREPLES' "M" parameters, measured in one run:

neatpar's whole construction (es_hyperneat.es_population: the CPPNs compiled, the C search over the
population and the kernel's tables built in C, on one thread and on one per CPU), against
PUREPLES-style construction written here as ESNetwork works: quad objects, a neat-python
FeedForwardNetwork.activate per query with query_cppn's threshold and scaling, numpy's var() of the
leaf weights gathered again at every test, sets of connection objects, deep copies in clean_net,
and the node_evals of create_phenotype_network. The baseline runs
on --baseline-genomes genomes spread over the population (each the best of 3 runs, as neatpar's
times are the best of 5) and is scaled to 150 per genome; its hidden nodes and links are checked to
equal neatpar's.

Usage: python bench/bench_es_hyperneat.py [--baseline-genomes N] [--seed S]
"""
import argparse
import copy
import statistics
import time

import neat
import numpy as np

from bench_hyperneat import cppns, query_cppn
from neatpar.processes import cpu_count
from neatpar.nn.es_hyperneat import compile_es_cppns, discover, es_population
from neatpar.nn.es_substrate import ESParams, EvolvableSubstrate

INPUTS = [(-1.0 + (2 * k + 1) / 8, -1.0) for k in range(8)]
OUTPUTS = [(-0.5, 1.0), (0.5, 1.0)]
PARAMS = ESParams()


# ---------------------------------------------------------------- PUREPLES-style construction

class Quad:
    def __init__(self, x, y, width, lvl):
        self.x, self.y, self.width, self.lvl, self.w, self.cs = x, y, width, lvl, 0.0, [None] * 4


class Link:
    def __init__(self, x1, y1, x2, y2, weight):
        self.x1, self.y1, self.x2, self.y2, self.weight = x1, y1, x2, y2, weight

    def __eq__(self, other):
        return (self.x1, self.y1, self.x2, self.y2) == (other.x1, other.y1, other.x2, other.y2)

    def __hash__(self):
        return hash((self.x1, self.y1, self.x2, self.y2, self.weight))


def variance(p):
    weights = []

    def walk(q):
        if q is not None and all(c is not None for c in q.cs):
            for c in q.cs:
                walk(c)
        elif q is not None:
            weights.append(q.w)
    walk(p)
    return np.var(weights) if p else 0.0


def divide(cppn, coord, outgoing, p):
    root = Quad(0.0, 0.0, 1.0, 1)
    queue = [root]
    while queue:
        q = queue.pop(0)
        h = q.width / 2.0
        q.cs = [Quad(q.x - h, q.y - h, h, q.lvl + 1), Quad(q.x - h, q.y + h, h, q.lvl + 1),
                Quad(q.x + h, q.y + h, h, q.lvl + 1), Quad(q.x + h, q.y - h, h, q.lvl + 1)]
        for c in q.cs:
            c.w = query_cppn(coord, (c.x, c.y), outgoing, cppn, p.max_weight)
        if q.lvl < p.initial_depth or (q.lvl < p.max_depth and variance(q) > p.division_threshold):
            queue.extend(q.cs)
    return root


def prune(cppn, coord, q, outgoing, p, links):
    for c in q.cs:
        if variance(c) > p.variance_threshold:
            prune(cppn, coord, c, outgoing, p, links)
            continue
        d = [abs(c.w - query_cppn(coord, other, outgoing, cppn, p.max_weight))
             for other in ((c.x - q.width, c.y), (c.x + q.width, c.y), (c.x, c.y - q.width), (c.x, c.y + q.width))]
        if max(min(d[2], d[3]), min(d[0], d[1])) > p.band_threshold:
            link = Link(*coord, c.x, c.y, c.w) if outgoing else Link(c.x, c.y, *coord, c.w)
            if c.w != 0.0 and link.y1 < link.y2 and not (link.x1 == link.x2 and link.y1 == link.y2):
                links.add(link)


def search(cppn, p):
    hidden, found = set(), set()
    for coord in INPUTS:
        links = set()
        prune(cppn, coord, divide(cppn, coord, True, p), True, p, links)
        found |= links
        hidden |= {(c.x2, c.y2) for c in links}
    unexplored = copy.deepcopy(hidden)
    for _ in range(p.iteration_level):
        for coord in unexplored:
            links = set()
            prune(cppn, coord, divide(cppn, coord, True, p), True, p, links)
            found |= links
            hidden |= {(c.x2, c.y2) for c in links}
        unexplored = hidden - unexplored
    for coord in OUTPUTS:
        links = set()
        prune(cppn, coord, divide(cppn, coord, False, p), False, p, links)
        found |= links
    reached, reaching = set(INPUTS), set(OUTPUTS)
    for ends, start, end in ((reached, "1", "2"), (reaching, "2", "1")):
        pending, grew = copy.deepcopy(found), True
        while grew:
            grew = False
            for c in copy.deepcopy(pending):
                if (getattr(c, "x" + start), getattr(c, "y" + start)) in ends:
                    ends.add((getattr(c, "x" + end), getattr(c, "y" + end)))
                    pending.remove(c)
                    grew = True
    nodes = reached & reaching
    kept = {c for c in found if (c.x1, c.y1) in nodes and (c.x2, c.y2) in nodes}
    return nodes - set(INPUTS) - set(OUTPUTS), kept


def pureples_network(genome, config, p):
    """create_phenotype_network's steps: the search, ids by coordinates, node_evals per target."""
    cppn = neat.nn.FeedForwardNetwork.create(genome, config)
    hidden, links = search(cppn, p)
    ids = {c: k for k, c in enumerate(INPUTS + OUTPUTS)}
    for c in hidden:
        ids[c] = len(ids)
    nodes = {}
    for (x, y), idx in ids.items():
        for c in links:
            if (c.x2, c.y2) == (x, y):
                nodes.setdefault(idx, []).append((ids[c.x1, c.y1], c.weight))
    act = neat.activations.ActivationFunctionSet().get(p.activation)
    evals = [(idx, act, sum, 0.0, 1.0, node_links) for idx, node_links in nodes.items()]
    return neat.nn.RecurrentNetwork(list(range(len(INPUTS))), list(range(len(INPUTS), len(INPUTS) + 2)), evals), \
        hidden, links


def best_of(fn, repeats=5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-genomes", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    es = EvolvableSubstrate(np.array(INPUTS), np.array(OUTPUTS), PARAMS)
    print(f"ES-HyperNEAT phenotypes of 150 CPPNs, {len(INPUTS)} inputs, {len(OUTPUTS)} outputs, {PARAMS}")
    many_name = f"neatpar {cpu_count()} thr"
    print(f"{'population':24} {'links/genome':>12} {'PUREPLES-style':>15} {'neatpar 1 thr':>14} {many_name:>14} "
          f"{'ratios (1 thr, ' + str(cpu_count()) + ' thr)':>22}")
    for name, hidden, extra in (("first generation", (0, 0), (0, 0)), ("evolved (2-8 hidden)", (2, 8), (0, 10))):
        config, genomes = cppns(150, args.seed, hidden, extra)
        one = best_of(lambda: es_population(genomes, config, es, 1))
        many = best_of(lambda: es_population(genomes, config, es, None))
        found = discover(compile_es_cppns(genomes, config), range(len(genomes)), es, 1)
        picked = list(range(0, 150, max(1, 150 // args.baseline_genomes)))[:args.baseline_genomes]
        seconds = 0.0
        for g in picked:
            seconds += best_of(lambda: pureples_network(genomes[g], config, PARAMS), 3)
            _, hidden_nodes, links = pureples_network(genomes[g], config, PARAMS)
            points = INPUTS + OUTPUTS + [tuple(c) for c in found[g].hidden.tolist()]
            mine = {(points[a], points[b]) for a, b in zip(found[g].sources.tolist(), found[g].targets.tolist())}
            assert hidden_nodes == {tuple(c) for c in found[g].hidden.tolist()}, f"genome {g}: hidden nodes differ"
            assert mine == {((c.x1, c.y1), (c.x2, c.y2)) for c in links}, f"genome {g}: links differ"
        baseline = seconds / len(picked) * 150
        links = statistics.mean(len(f.weights) for f in found)
        print(f"{name:24} {links:12.1f} {baseline:14.2f}s {one * 1000:12.1f}ms {many * 1000:12.1f}ms "
              f"{baseline / one:13.0f}x {baseline / many:6.0f}x")


if __name__ == "__main__":
    main()
