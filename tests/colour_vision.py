"""What a colour looks like to readers with colour blindness, and how far apart two colours are.

The matrices are Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of
color vision deficiency", at full severity: a reader without working L cones (protanopia), M cones
(deuteranopia) or S cones (tritanopia). They act on linear RGB. Distances are CIE 1976 Delta E in CIELAB
(D65 white): about 2 is the smallest difference anyone notices side by side; colours a reader must *name*
apart in a small, noisy picture want tens of units.
"""

import numpy as np

from course_lib.plots.style import linear_rgb

VISION = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
_SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
_D65_WHITE = np.array([0.95047, 1.0, 1.08883])


def _lab(linear_rgb):
    xyz = _SRGB_TO_XYZ @ np.clip(linear_rgb, 0.0, 1.0) / _D65_WHITE
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    return np.array([116.0 * f[1] - 16.0, 500.0 * (f[0] - f[1]), 200.0 * (f[1] - f[2])])


def difference_as_seen(first, second, vision="normal"):
    """Delta E (CIELAB) between two 0-255 RGB colours as a reader with `vision` sees them."""
    matrix = VISION[vision]
    first, second = (linear_rgb(np.asarray(colour, dtype=float) / 255.0) for colour in (first, second))
    return float(np.linalg.norm(_lab(matrix @ first) - _lab(matrix @ second)))
