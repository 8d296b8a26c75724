"""A controller written by hand for the camera build (unity_builds/camera), reading only the camera
image: what a solved camera task looks like."""
import numpy as np


def steer_to_target(images: np.ndarray) -> np.ndarray:
    """(agents, height, width, channels) observations as mlagents-envs decodes them -> continuous
    moves towards the centre of the blob brightest in the first channel (the red target of an RGB
    camera; the brightest area of a grayscale one; the target channel of a grid sensor)."""
    first = images[..., 0]
    floor = np.median(first.reshape(len(images), -1), axis=1)[:, None, None]
    weight = np.clip(first - floor, 0, None)
    weight = np.where(weight >= 0.5 * weight.max(axis=(1, 2), keepdims=True), weight, 0.0)
    size = images.shape[1]
    centre = (np.arange(size) + 0.5) - size / 2
    total = weight.sum(axis=(1, 2)) + 1e-9
    dx = (weight * centre[None, None, :]).sum(axis=(1, 2)) / total
    dy = -(weight * centre[None, :, None]).sum(axis=(1, 2)) / total
    scale = np.maximum(np.abs(dx), np.abs(dy)) + 1e-9
    return (np.column_stack([dx, dy]) / scale[:, None]).astype(np.float32)


def steering_cppn(config, spread: float = 0.5):
    """A HyperNEAT CPPN written by hand for the camera build's RGB image on a 3-D substrate whose
    two output nodes sit at (1, 0) (the move along x) and (0, 1) (along y), with link expression
    (hyperneat_leo): the weight from a pixel at (x, y) to the output at (xt, yt) is
    g(a(x - xt)) - g(a(x + xt)) + g(a(y - yt)) - g(a(y + yt)) (g neat-python's gauss, a = `spread`),
    positive where the pixel lies along the output's direction and negative opposite, and only
    the red channel (z < -0.3) is linked: the geometric rule that steers to the red target."""
    from .configs import hand_genome
    xs, ys, zs, xt, yt = -1, -2, -3, -4, -5
    gauss = ("gauss", "sum", 0.0, 1.0)
    nodes = {0: ("identity", "sum", 0.0, 1.0), 1: ("tanh", "sum", -3.0, 1.0), 10: gauss, 11: gauss, 12: gauss,
             13: gauss}
    links = [(xs, 10, spread, True), (xt, 10, -spread, True), (xs, 11, spread, True), (xt, 11, spread, True),
             (ys, 12, spread, True), (yt, 12, -spread, True), (ys, 13, spread, True), (yt, 13, spread, True),
             (10, 0, 1.0, True), (11, 0, -1.0, True), (12, 0, 1.0, True), (13, 0, -1.0, True), (zs, 1, -10.0, True)]
    return hand_genome(config, nodes, links)


def two_node_cppn(config, spread: float = 1.0, shift: float = 2.0):
    """The same rule in the search space of configs/camera.cfg (two tanh hidden nodes): the weight
    from a pixel at (x, y) to the output at (xt, yt) is t(a x + b yt) + t(a y + b xt) - 1 (t
    neat-python's tanh, a = `spread`, b = `shift`): at the move along x (1, 0) the second node
    saturates at 1 and the first weighs the pixel by its x, at the move along y the other way round;
    link expression links the red channel alone, as in steering_cppn."""
    from .configs import hand_genome
    xs, ys, zs, xt, yt = -1, -2, -3, -4, -5
    tanh = ("tanh", "sum", 0.0, 1.0)
    nodes = {0: ("identity", "sum", -1.0, 1.0), 1: ("tanh", "sum", -3.0, 1.0), 10: tanh, 11: tanh}
    links = [(xs, 10, spread, True), (yt, 10, shift, True), (ys, 11, spread, True), (xt, 11, shift, True),
             (10, 0, 1.0, True), (11, 0, 1.0, True), (zs, 1, -10.0, True)]
    return hand_genome(config, nodes, links)
