"""Padding text to a column width as it is drawn, not as it is stored.

`f"{word:<12}"` counts code points. A Devanagari word stores its vowel signs,
virama and nasal marks as code points of their own, but most of them are drawn
on top of or below the letter before them and take no room of their own: the
column after "कुंभ" (4 code points, 2 drawn cells) starts two cells too far
left. These helpers count only what takes room, so printed tables of Hindi
words line up in a terminal (in a browser, whose Devanagari font is not
monospaced, they line up approximately).
"""

import unicodedata

# Combining marks drawn on another letter (Mn, Me) and format characters such as
# the zero-width joiner (Cf) take no cell; spacing vowel signs (Mc, e.g. "ा") do.
ZERO_WIDTH_CATEGORIES = ("Mn", "Me", "Cf")


def display_width(text):
    """The number of character cells `text` takes when printed.

    >>> display_width("कुंभ"), len("कुंभ")
    (2, 4)
    """
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a str. Received: {type(text).__name__}")
    return sum(unicodedata.category(character) not in ZERO_WIDTH_CATEGORIES for character in text)


def pad(text, width, align="<"):
    """`text` padded with spaces to `width` cells (`"<"` left-aligned, `">"` right-aligned).

    Text wider than `width` is returned unchanged, as `format` does.
    """
    if align not in ("<", ">"):
        raise ValueError(f"`align` must be '<' or '>'. Received: align={align!r}")
    room = " " * max(0, int(width) - display_width(text))
    return text + room if align == "<" else room + text
