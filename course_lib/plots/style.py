"""Readable by every student: text colours by contrast, and series told apart by more than hue.

* `text_colour_on(colour)`: black or white, whichever contrasts more with the
  background colour (WCAG 2 contrast ratio). A fixed rule such as "white
  above 0.5" put white numbers on mid-blue cells at 2.4:1, below the 4.5:1
  that normal text needs.
* `series_style(index)`: one marker (and marker size) per series, so lines
  and points stay apart for readers who cannot tell the default colours
  apart (orange and green are 1.6 apart in CAM02-UCS under protanopia) and
  on a grey-scale printout; each later series gets a smaller marker, so one
  drawn over another at the same point leaves the first visible around it.
"""

import numpy as np

MARKERS = ("o", "s", "^", "D", "v", "P")


def linear_rgb(colour):
    """The linear-light RGB of an sRGB(A) colour with channels in [0, 1] (alpha dropped), as WCAG 2 computes it."""
    channels = np.asarray(colour, dtype=float)[:3]
    return np.where(channels <= 0.03928, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)


def relative_luminance(colour):
    """WCAG 2 relative luminance of an RGB(A) colour with channels in [0, 1] (alpha ignored)."""
    return float(np.dot([0.2126, 0.7152, 0.0722], linear_rgb(colour)))


def contrast_ratio(first, second):
    """WCAG 2 contrast ratio of two colours, from 1 (none) to 21 (black on white)."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_colour_on(colour):
    """'black' or 'white', whichever has the larger contrast ratio against `colour` (RGB or RGBA in [0, 1])."""
    return "white" if contrast_ratio(colour, (1.0, 1.0, 1.0)) > contrast_ratio(colour, (0.0, 0.0, 0.0)) else "black"


def blend_on_white(colour, opacity):
    """The colour a `colour` drawn at `opacity` over white paper shows (RGB in [0, 1])."""
    return opacity * np.asarray(colour, dtype=float)[:3] + (1.0 - opacity)


def series_style(index):
    """Keyword arguments for `Axes.plot` that set series `index` apart: its own marker and size."""
    return {"marker": MARKERS[index % len(MARKERS)], "markersize": max(3.0, 7.0 - 1.5 * (index % len(MARKERS)))}


__all__ = ["blend_on_white", "contrast_ratio", "linear_rgb", "relative_luminance", "series_style", "text_colour_on"]
