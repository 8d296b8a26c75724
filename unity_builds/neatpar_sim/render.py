"""Frames of a task's own state, drawn with numpy: what a clip of an agent shows.

A task that can be watched overrides `Task.render(behavior, row)` (spec.py) and draws one agent's
row (or its area) on a `Canvas` of SIZE x SIZE pixels, RGB uint8. The drawing is a plain top-down
(or side) view of the values the task keeps, so that a frame shows exactly what the state says.
The player sends a frame only when Python asks for one (the Frames side channel, side_channels.py).
"""
from __future__ import annotations

import numpy as np

SIZE = 256          # frames are SIZE x SIZE pixels
FRAMES_PER_SECOND = 25.0   # the rate a clip of one frame per decision plays at

BACKGROUND = (32, 34, 40)
LINE = (120, 124, 132)
HIGHLIGHT = (255, 235, 120)


class Canvas:
    """An RGB uint8 image with the few shapes the tasks draw, in pixel coordinates (x to the right,
    y downwards); shapes are clipped to the image."""

    def __init__(self, size: int = SIZE, color=BACKGROUND):
        self.image = np.empty((size, size, 3), np.uint8)
        self.size = size
        self._fill(0, size, 0, size, color)

    def _fill(self, top: int, bottom: int, left: int, right: int, color) -> None:
        """Rows top..bottom, columns left..right, one colour: written as whole RGB rows, which numpy
        copies many times faster than it broadcasts a colour over pixels."""
        rows = self.image.reshape(self.size, 3 * self.size)
        rows[top:bottom, 3 * left:3 * right] = np.tile(np.asarray(color, np.uint8), right - left)

    def rect(self, x0: float, y0: float, x1: float, y1: float, color) -> None:
        """The pixels whose centres lie in [x0, x1) x [y0, y1) (corners in any order)."""
        (x0, x1), (y0, y1) = sorted((x0, x1)), sorted((y0, y1))
        left, right = _span(x0, x1, self.size)
        top, bottom = _span(y0, y1, self.size)
        if left < right and top < bottom:
            self._fill(top, bottom, left, right, color)

    def disc(self, x: float, y: float, radius: float, color) -> None:
        """The pixels whose centres lie within `radius` of (x, y)."""
        left, right = _span(x - radius, x + radius + 1, self.size)
        top, bottom = _span(y - radius, y + radius + 1, self.size)
        if left >= right or top >= bottom:
            return
        ys, xs = np.ogrid[top:bottom, left:right]
        inside = (xs + 0.5 - x) ** 2 + (ys + 0.5 - y) ** 2 <= radius ** 2
        self.image[top:bottom, left:right][inside] = color

    def frame(self, x0: float, y0: float, x1: float, y1: float, color, width: float = 2) -> None:
        """The outline of a rectangle, `width` pixels wide inside its edges."""
        self.rect(x0, y0, x1, y0 + width, color)
        self.rect(x0, y1 - width, x1, y1, color)
        self.rect(x0, y0, x0 + width, y1, color)
        self.rect(x1 - width, y0, x1, y1, color)

    def line(self, x0: float, y0: float, x1: float, y1: float, color, width: float = 3) -> None:
        """The pixels whose centres lie within width / 2 of the segment from (x0, y0) to (x1, y1)."""
        radius = width / 2
        left, right = _span(min(x0, x1) - radius, max(x0, x1) + radius + 1, self.size)
        top, bottom = _span(min(y0, y1) - radius, max(y0, y1) + radius + 1, self.size)
        if left >= right or top >= bottom:
            return
        ys, xs = np.ogrid[top:bottom, left:right]
        px, py = xs + 0.5 - x0, ys + 0.5 - y0
        dx, dy = x1 - x0, y1 - y0
        length = dx * dx + dy * dy
        along = np.clip((px * dx + py * dy) / length, 0.0, 1.0) if length > 0 else 0.0
        inside = (px - along * dx) ** 2 + (py - along * dy) ** 2 <= radius ** 2
        self.image[top:bottom, left:right][inside] = color

    def bar(self, fraction: float, y0: float, y1: float, color, margin: float = 8) -> None:
        """A horizontal gauge from the left margin: `fraction` (clipped to [0, 1]) of the width."""
        fraction = min(max(float(fraction), 0.0), 1.0)
        self.rect(margin, y0, margin + fraction * (self.size - 2 * margin), y1, color)


def _span(low: float, high: float, size: int) -> tuple[int, int]:
    """The pixel indices whose centres lie in [low, high), within the image."""
    return max(0, int(np.ceil(low - 0.5))), min(size, int(np.ceil(high - 0.5)))


class Scale:
    """A linear map from a task's coordinates to pixels: `low`..`high` onto `start`..`end`
    (a decreasing pixel range flips the axis, as a height axis drawn upwards needs)."""

    def __init__(self, low: float, high: float, start: float, end: float):
        self.low, self.start = low, start
        self.factor = (end - start) / (high - low)

    def __call__(self, value: float) -> float:
        return self.start + (float(value) - self.low) * self.factor

    def length(self, value: float) -> float:
        """A distance in the task's units, in pixels."""
        return abs(float(value) * self.factor)
