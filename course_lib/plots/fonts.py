"""A Devanagari font for plots, and checks that Hindi text is really shaped.

Matplotlib's default font (DejaVu Sans) has no Devanagari glyphs: Hindi tick
labels come out as empty boxes with "Glyph ... missing from font" warnings.
The course depends on the PyPI package `fontpkg-noto-sans-devanagari`, which
ships Noto Sans Devanagari (OFL) as a file inside the Python package, so the
same font is available on a fresh machine and on Colab without system fonts.

Having the glyphs is not enough for Hindi: a left-side vowel sign (the i-matra
in "कि" is typed after "क" but drawn before it) and conjuncts ("क्ष" is one
glyph, not क + ् + ष) need *shaping*. Matplotlib 3.11 lays out every string
with libraqm (HarfBuzz + FriBidi), which applies the font's OpenType rules, so
with this font the Agg backend (PNG, notebooks) draws correctly shaped Hindi.
Older matplotlib versions draw code points one by one; `check_devanagari_shaping`
detects that.
"""

import functools
import importlib.resources

import matplotlib
from matplotlib import font_manager

FONT_PACKAGE = "fontpkg_noto_sans_devanagari"
FAMILY = "Noto Sans Devanagari"
# Latin fallback for labels such as "<stop>" (Noto Sans Devanagari also has Latin).
FALLBACK_FAMILY = "DejaVu Sans"


def has_devanagari(text):
    """True when `text` contains a character of the Devanagari block (U+0900-U+097F)."""
    return any("\u0900" <= character <= "\u097f" for character in str(text))


def devanagari_font_files():
    """Paths of the packaged Noto Sans Devanagari font files (`.ttf`/`.otf`)."""
    try:
        root = importlib.resources.files(FONT_PACKAGE)
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"The Devanagari font package is not installed. Run `pip install "
            f"fontpkg-noto-sans-devanagari` (a dependency of course_lib). Received: {error}"
        ) from error
    files = sorted(
        str(entry)
        for entry in (root / "files").iterdir()
        if entry.name.lower().endswith((".ttf", ".otf"))
    )
    if not files:
        raise FileNotFoundError(f"No font file found in {root / 'files'}")
    return files


@functools.lru_cache(maxsize=None)
def register_devanagari_font():
    """Adds the packaged font to matplotlib's font manager (once); returns its family name."""
    for path in devanagari_font_files():
        font_manager.fontManager.addfont(path)
    return FAMILY


def devanagari_font(size=None, weight="normal"):
    """A `FontProperties` that draws Devanagari (and Latin) text.

    Args:
        size: font size in points (default: matplotlib's).
        weight: "normal", "bold", or a number 100-900.

    Returns:
        `matplotlib.font_manager.FontProperties`, to pass as `fontproperties=`
        to `attention_heatmap`, `ax.set_title` or `ax.text`.
    """
    register_devanagari_font()
    return font_manager.FontProperties(family=[FAMILY, FALLBACK_FAMILY], size=size, weight=weight)


def _ft2font(fontproperties):
    paths = font_manager.fontManager._find_fonts_by_props(fontproperties)
    return font_manager.get_font(paths)


def glyphs(text, fontproperties=None):
    """The glyphs matplotlib lays out for `text`: a list of `(glyph_name, glyph_index)`.

    Index 0 is `.notdef`, the "missing glyph" box. Shaping shows in the result:
    "क्ष" gives one conjunct glyph, "कि" puts the i-matra glyph first.
    """
    fontproperties = fontproperties or devanagari_font()
    font = _ft2font(fontproperties)
    font.set_size(12, 72)
    items = font._layout(text, matplotlib.ft2font.LoadFlags.NO_HINTING)
    return [(item.ft_object.get_glyph_name(item.glyph_index), int(item.glyph_index)) for item in items]


def _is_missing(item):
    # Index 0 is `.notdef`; matplotlib >= 3.11 also falls back to its
    # "Last Resort" font, whose glyphs are boxes naming the Unicode block.
    return item.glyph_index == 0 or "lastresort" in str(item.ft_object.fname).lower()


def missing_glyphs(texts, fontproperties=None):
    """The characters of `texts` that would be drawn as a box (no real glyph)."""
    fontproperties = fontproperties or devanagari_font()
    font = _ft2font(fontproperties)
    font.set_size(12, 72)
    missing = set()
    for text in texts:
        for item in font._layout(text, matplotlib.ft2font.LoadFlags.NO_HINTING):
            if _is_missing(item) and not item.char.isspace():
                missing.add(item.char)
    return sorted(missing)


def text_width(text, fontproperties=None):
    """Width in pixels (at 12 pt, 72 dpi) of `text` as laid out by matplotlib."""
    fontproperties = fontproperties or devanagari_font()
    font = _ft2font(fontproperties)
    font.set_size(12, 72)
    font.set_text(text, 0.0)
    return font.get_width_height()[0] / 64.0


def width_in_axes(ax):
    """A function giving a text artist's drawn width as a fraction of `ax`'s width.

    It measures what the figure's canvas really draws (an Agg canvas, as in
    notebooks and PNG files), font, size, rotation and shaping included.
    """
    renderer = ax.figure.canvas.get_renderer()
    axes_width = ax.get_window_extent(renderer).width

    def measure(text):
        return text.get_window_extent(renderer).width / axes_width

    return measure


def check_devanagari_shaping(fontproperties=None):
    """Raises `RuntimeError` unless Devanagari text is shaped correctly.

    Checks that every glyph exists, that the conjunct "क्ष" becomes a single
    glyph and that the i-matra of "कि" is moved before the consonant.
    """
    fontproperties = fontproperties or devanagari_font()
    version = tuple(int(part) for part in matplotlib.__version__.split(".")[:2] if part.isdigit())
    if version < (3, 11):
        raise RuntimeError(
            "Hindi needs matplotlib >= 3.11 (text shaping with libraqm). "
            f"Received: matplotlib {matplotlib.__version__}. On Colab, restart the runtime after "
            "`pip install`."
        )
    missing = missing_glyphs(["क्ष", "कि", "हिन्दी"], fontproperties)
    if missing:
        raise RuntimeError(f"The font lacks Devanagari glyphs. Missing: {missing}")
    conjunct = glyphs("क्ष", fontproperties)
    if len(conjunct) != 1:
        raise RuntimeError(f"'क्ष' was not shaped into one conjunct glyph. Received: {conjunct}")
    matra_first = glyphs("कि", fontproperties)
    consonant = glyphs("क", fontproperties)[0]
    if len(matra_first) != 2 or matra_first[0] == consonant:
        raise RuntimeError(f"The i-matra of 'कि' was not moved before 'क'. Received: {matra_first}")
    return True
