"""ES-HyperNEAT written from the paper's pseudo-code (Risi and Stanley 2012, Algorithms 1-3), in
the order of operations PUREPLES' ESNetwork uses, as the tests' reference: neat-python's
FeedForwardNetwork as the CPPN (one activate() per query), PUREPLES' threshold and scaling, a
quadtree of nested dicts, numpy's var() over a quad's leaf weights, Python sets of points and
links. It returns the discovered network (hidden points, links with weights) and builds it as a
neat-python FeedForwardNetwork in neatpar's documented order (nn/es_hyperneat.py)."""
import neat
import numpy as np

from .hyperneat import mapped


def points_of(nodes) -> list:
    """(x, y) tuples of Python floats (numpy's float64 would make sum() another sum)."""
    return [tuple(c) for c in np.asarray(nodes, dtype=np.float64).tolist()]


def cppn_weight(net, source, target, max_weight: float) -> float:
    """The CPPN's weight from `source` to `target` (x, y points)."""
    return mapped(net.activate([source[0], source[1], target[0], target[1], 1.0])[0], 0.2, max_weight)


def leaf_weights(quad: dict) -> list:
    """The weights of the leaves under `quad`, depth first, children in order."""
    if quad["children"]:
        return [w for child in quad["children"] for w in leaf_weights(child)]
    return [quad["w"]]


def quad_variance(quad: dict) -> float:
    return float(np.var(leaf_weights(quad)))


def quadtree(net, point, outgoing: bool, p) -> dict:
    """Algorithm 1, division: from the root (0, 0) of half-width 1 at level 1, breadth first; every
    quad dequeued is split in 4 ((-,-), (-,+), (+,+), (+,-)), its children weighed, and queued while
    the level is below initial_depth, or below max_depth where the children's variance is above
    division_threshold."""
    root = {"x": 0.0, "y": 0.0, "width": 1.0, "level": 1, "w": 0.0, "children": []}
    queue = [root]
    while queue:
        quad = queue.pop(0)
        half = quad["width"] / 2.0
        for dx, dy in ((-1, -1), (-1, 1), (1, 1), (1, -1)):
            child = {"x": quad["x"] + dx * half, "y": quad["y"] + dy * half, "width": half,
                     "level": quad["level"] + 1, "children": []}
            target = (child["x"], child["y"])
            child["w"] = cppn_weight(net, point, target, p.max_weight) if outgoing else \
                cppn_weight(net, target, point, p.max_weight)
            quad["children"].append(child)
        if quad["level"] < p.initial_depth or (quad["level"] < p.max_depth
                                               and quad_variance(quad) > p.division_threshold):
            queue.extend(quad["children"])
    return root


def extract(net, point, quad: dict, outgoing: bool, p, links: dict) -> None:
    """Algorithm 2, pruning and extraction: a child of high variance is searched further; a
    child whose band (neighbours at the parent's half-width) stands out becomes a link, if its
    weight is not 0, it goes upwards and it is not a loop. `links`: (source, target) -> weight."""
    width = quad["width"]
    for child in quad["children"]:
        if quad_variance(child) > p.variance_threshold:
            extract(net, point, child, outgoing, p, links)
            continue
        x, y, w = child["x"], child["y"], child["w"]

        def weight_to(other):
            return cppn_weight(net, point, other, p.max_weight) if outgoing else \
                cppn_weight(net, other, point, p.max_weight)
        left, right = abs(w - weight_to((x - width, y))), abs(w - weight_to((x + width, y)))
        top, bottom = abs(w - weight_to((x, y - width))), abs(w - weight_to((x, y + width)))
        if max(min(top, bottom), min(left, right)) > p.band_threshold:
            source, target = (tuple(point), (x, y)) if outgoing else ((x, y), tuple(point))
            if w != 0.0 and source[1] < target[1] and source != target:
                links.setdefault((source, target), w)


def explore(net, point, outgoing: bool, p) -> dict:
    links: dict = {}
    extract(net, point, quadtree(net, point, outgoing, p), outgoing, p, links)
    return links


def es_search(genome, config, inputs, outputs, p):
    """Algorithm 3: links from the inputs, from the hidden nodes found (iteration_level times, each
    time the hidden nodes minus those explored last), to the outputs; then only the points on a
    path from an input to an output, and the links between them. Returns (hidden points, links
    {(source, target): weight})."""
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    inputs, outputs = points_of(inputs), points_of(outputs)
    links, hidden = {}, set()
    for point in inputs:
        found = explore(net, point, True, p)
        links.update({k: v for k, v in found.items() if k not in links})
        hidden |= {target for _, target in found}
    unexplored = set(hidden)
    for _ in range(p.iteration_level):
        for point in unexplored:
            found = explore(net, point, True, p)
            links.update({k: v for k, v in found.items() if k not in links})
            hidden |= {target for _, target in found}
        unexplored = hidden - unexplored
    for point in outputs:
        found = explore(net, point, False, p)
        links.update({k: v for k, v in found.items() if k not in links})
    reached, reaching = set(inputs), set(outputs)
    changed = True
    while changed:
        changed = False
        for source, target in links:
            if source in reached and target not in reached:
                reached.add(target)
                changed = True
    changed = True
    while changed:
        changed = False
        for source, target in links:
            if target in reaching and source not in reaching:
                reaching.add(source)
                changed = True
    kept = reached & reaching
    kept_links = {k: w for k, w in links.items() if k[0] in kept and k[1] in kept}
    return kept - set(inputs) - set(outputs), kept_links


def reference_network(hidden, links: dict, inputs, outputs, activation: str):
    """The discovered network as neat-python's FeedForwardNetwork, as nn/es_hyperneat.py defines
    it: node keys inputs, outputs, then hidden points by (y, x); every non-input node with links
    (links into inputs left out) evaluated in order of (y, key), its links by source key."""
    inputs, outputs = points_of(inputs), points_of(outputs)
    points = inputs + outputs + sorted(hidden, key=lambda c: (c[1], c[0]))
    key = {point: k for k, point in enumerate(points)}
    act = neat.activations.ActivationFunctionSet().get(activation)
    by_target: dict = {}
    for (source, target), w in links.items():
        if key[target] >= len(inputs):
            by_target.setdefault(key[target], []).append((key[source], w))
    order = sorted(by_target, key=lambda k: (points[k][1], k))
    node_evals = [(k, act, neat.aggregations.sum_aggregation, 0.0, 1.0, sorted(by_target[k])) for k in order]
    return neat.nn.FeedForwardNetwork(list(range(len(inputs))), list(range(len(inputs), len(inputs) + len(outputs))),
                                      node_evals)
