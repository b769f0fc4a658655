"""What a document classifier reads: sentence bars, word highlighting, confusion matrix.

`document_html` returns HTML for a notebook (`IPython.display.HTML`):
one row per sentence, a bar as long as the sentence weight `alpha_i`, and
each word on a background as dark as its word weight `alpha_ij`.
`document_figure` draws the same as a Matplotlib figure (for a PNG).
"""

import html

import numpy as np

from course_lib.plots.style import blend_on_white, text_colour_on


def _check(sentences, sentence_weights, word_weights):
    if isinstance(sentences, str) or any(isinstance(sentence, str) for sentence in sentences):
        raise ValueError(  # a string would be drawn one character per "word"
            "`sentences` must be a list of sentences, each a list of words (sentence.split()). "
            f"Received: {sentences!r:.80}"
        )
    sentence_weights = np.asarray(sentence_weights, dtype=float)
    if sentence_weights.ndim != 1 or len(sentence_weights) < len(sentences):
        raise ValueError(
            f"Need one sentence weight per sentence ({len(sentences)}). "
            f"Received: sentence_weights.shape={sentence_weights.shape}"
        )
    if word_weights is not None:
        try:
            word_weights = np.asarray(word_weights, dtype=float)
        except ValueError:  # ragged rows: NumPy's "inhomogeneous shape" says nothing of the sentences
            raise ValueError(
                "Need word weights (sentences, words): one row per sentence, all padded to one length. "
                f"Received: rows of lengths {[len(row) for row in word_weights]}"
            ) from None
        if word_weights.ndim != 2 or word_weights.shape[0] < len(sentences) or any(
            len(words) > word_weights.shape[1] for words in sentences
        ):
            raise ValueError(
                "Need word weights (sentences, words) covering every word. "
                f"Received: word_weights.shape={word_weights.shape} for {len(sentences)} sentences"
            )
    used = [sentence_weights[: len(sentences)]]  # the weights drawn; padding beyond them is not
    if word_weights is not None:
        used += [word_weights[i, : len(words)] for i, words in enumerate(sentences)]
    if not all(np.isfinite(part).all() for part in used):
        raise ValueError(
            "Sentence and word weights must be finite numbers. "
            f"Received: NaN or inf among the weights of the {len(sentences)} sentences"
        )
    return sentence_weights, word_weights


def word_shades(sentence_weights, word_weights, sentences):
    """How dark each word is drawn, in [0, 1]: `alpha_ij` times `alpha_i`, each relative to its largest.

    A word's weight `alpha_ij` only says where its sentence looked; whether the
    document listened to that sentence is `alpha_i`. Scaling by the sentence's
    weight keeps the words of ignored sentences pale, so the dark words are the
    ones the classifier actually used.

    Returns:
        A list with one array per sentence (its words' shades).
    """
    top_sentence = sentence_weights[: len(sentences)].max() if len(sentences) else 0.0
    shades = []
    for i, words in enumerate(sentences):
        row = word_weights[i, : len(words)]
        top_word = row.max() if row.size else 0.0
        sentence_share = sentence_weights[i] / top_sentence if top_sentence > 0 else 0.0
        shades.append(row / top_word * sentence_share if top_word > 0 else np.zeros(len(words)))
    return shades


# The colour of a word's shade, as RGB 0-255: its opacity is the word's shade (at most 0.85), in HTML and PNG alike.
WORD_SHADE_RGB = (230, 80, 30)
MAX_WORD_OPACITY = 0.85


def document_html(sentences, sentence_weights, word_weights=None, title=None, highlight=None,
                  highlight_label="highlighted sentence"):
    """HTML of one document with its attention weights.

    Args:
        sentences: list of sentences, each a list of words (as the model saw them).
        sentence_weights: `(>= len(sentences),)` weights `alpha_i`.
        word_weights: optional `(sentences, words)` weights `alpha_ij`; words
            are shaded by `word_shades` (`alpha_ij` times `alpha_i`, each
            relative to its largest), and hovering shows `alpha_ij`.
        title: optional heading (e.g. true and predicted class).
        highlight: optional sentence index to mark (e.g. the planted sentence).
        highlight_label: what the marked sentence is, for the key under the table.

    The table is black on white, whatever the notebook's theme (in a dark
    theme the light text fell to 3:1 on the darkest shade), and a key under
    it says what the bar, the shading and the marker mean, as the PNG's does.

    Returns:
        An HTML string.
    """
    sentence_weights, word_weights = _check(sentences, sentence_weights, word_weights)
    shades = None if word_weights is None else word_shades(sentence_weights, word_weights, sentences)
    rows = []
    for i, words in enumerate(sentences):
        weight = sentence_weights[i]
        if word_weights is not None:
            spans = " ".join(
                f'<span style="background: rgba({", ".join(map(str, WORD_SHADE_RGB))}, {MAX_WORD_OPACITY * shade:.2f}); '
                f'padding: 0 2px" '
                f'title="{w:.3f}">{html.escape(word)}</span>'
                for word, w, shade in zip(words, word_weights[i], shades[i])
            )
        else:
            spans = html.escape(" ".join(words))
        mark = " &#9664;" if highlight == i else ""
        rows.append(
            "<tr>"
            f'<td style="width: 110px; text-align: left"><div style="background: #3b6fb6; height: 12px; '
            f'width: {100 * weight:.0f}px"></div></td>'
            f'<td style="text-align: right; font-family: monospace">{weight:.2f}</td>'
            f'<td style="text-align: left">{spans}{mark}</td>'
            "</tr>"
        )
    heading = f"<p><b>{html.escape(title)}</b></p>" if title else ""
    key = "<br>".join(html.escape(line) for line in _key_lines(word_weights is not None,
                                                               highlight_label if highlight is not None else None))
    return (f'{heading}<div style="background: #fff; color: #000; padding: 4px">'
            f'<table style="border-collapse: collapse; color: #000">{"".join(rows)}</table>'
            f'<p style="font-size: 85%; color: #444">{key}</p></div>')


def document_figure(sentences, sentence_weights, word_weights=None, title=None, highlight=None,
                    max_words_per_line=14, ax=None, key=True, highlight_label="highlighted sentence"):
    """The same picture as `document_html` (word shades from `word_shades`), drawn with Matplotlib.

    Args:
        sentences, sentence_weights, word_weights, highlight: as for `document_html`.
        title: optional title, e.g. the true and predicted class (as `document_html`'s heading).
        max_words_per_line: longer sentences wrap onto more lines.
        ax: axes to draw on (a new figure when None).
        key: write under the document what the bar, the shading and the marker mean (a PNG has no
            hover text to explain them).
        highlight_label: what the marked sentence is, for the key (e.g. "planted sentence").

    Returns:
        The Matplotlib figure (save it with `fig.savefig("doc.png")`).
    """
    import matplotlib.pyplot as plt

    from course_lib.plots.fonts import width_in_axes

    if not isinstance(max_words_per_line, (int, np.integer)) or max_words_per_line < 1:
        raise ValueError(
            f"`max_words_per_line` must be at least 1. Received: max_words_per_line={max_words_per_line!r}"
        )
    sentence_weights, word_weights = _check(sentences, sentence_weights, word_weights)
    shades = None if word_weights is None else word_shades(sentence_weights, word_weights, sentences)
    lines = []  # (sentence index, first word index, words)
    for i, words in enumerate(sentences):
        for start in range(0, max(len(words), 1), max_words_per_line):
            lines.append((i, start, words[start:start + max_words_per_line]))
    key_lines = _key_lines(word_weights is not None, highlight_label if highlight is not None else None) if key else []
    if ax is None:
        fig, ax = plt.subplots(figsize=(11, 0.32 * (len(lines) + 0.8 * len(key_lines)) + 0.8))
    else:
        fig = ax.figure
    ax.set_xlim(0, 1)
    ax.set_ylim(len(lines) + 0.8 * len(key_lines), -0.5)
    ax.axis("off")
    measure = width_in_axes(ax)
    probe = ax.text(0, 0, "n", fontsize=9)
    space = measure(probe)  # the gap between two words: about one letter
    probe.remove()
    for row, (i, start, words) in enumerate(lines):
        if start == 0:
            ax.barh(row, 0.12 * sentence_weights[i], left=0.0, height=0.6, color="#3b6fb6")
            ax.text(0.13, row, f"{sentence_weights[i]:.2f}", va="center", fontsize=8, family="monospace")
        x = 0.19
        for j, word in enumerate(words):
            opacity = 0.0 if word_weights is None else MAX_WORD_OPACITY * shades[i][start + j]
            colour = tuple(channel / 255 for channel in WORD_SHADE_RGB) + (opacity,)  # an unshaded word: no box
            drawn = ax.text(x, row, word, va="center", fontsize=9, parse_math=False,  # "$5$" is text, not maths
                            # black or white, whichever reads better
                            color=text_colour_on(blend_on_white(colour, opacity)),
                            bbox=dict(facecolor=colour, edgecolor="none", pad=1.0))
            x += measure(drawn) + space  # the word's real width, so no two words overlap
        last_line = start + len(words) >= len(sentences[i])
        if highlight == i and last_line:
            ax.text(x, row, "\u25c0", va="center", fontsize=9, color="#3b6fb6")  # after the planted sentence
    if key_lines:
        ax.text(0.0, len(lines) + 0.1, "\n".join(key_lines), va="top", fontsize=8, color="0.3")
    if title:
        ax.set_title(title, loc="left", fontsize=10, parse_math=False)
    return fig


def _key_lines(shaded, highlight_label):
    """What the figure's marks mean, one line each."""
    bar = "Bar and number: the sentence's weight α_i."
    if highlight_label:
        bar += f"   \u25c0: the {highlight_label}."
    lines = [bar]
    if shaded:
        lines.append("Shading: the word's weight α_ij times its sentence's α_i, each relative to its largest "
                     "(the darkest words are the ones the classifier used).")
    return lines


def confusion_matrix_plot(matrix, class_names, ax=None, title=None, normalize=False):
    """A confusion matrix as an annotated image (rows: true class, columns: predicted).

    Returns:
        The Matplotlib axes.
    """
    import matplotlib.pyplot as plt

    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] != len(class_names):
        raise ValueError(
            f"Need a square matrix with one row per class ({len(class_names)}). Received: matrix.shape={matrix.shape}"
        )
    if matrix.dtype.kind not in "uif" or not np.isfinite(matrix).all() or (matrix < 0).any():
        raise ValueError(
            "`matrix` must hold counts (finite numbers >= 0). "
            f"Received: dtype={matrix.dtype}, finite={bool(matrix.dtype.kind in 'uif' and np.isfinite(matrix).all())}"
        )
    shown = matrix / np.maximum(matrix.sum(axis=1, keepdims=True), 1) if normalize else matrix
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * len(class_names) + 2, 1.1 * len(class_names) + 1.5), layout="constrained")
    # Shares of each true class on one fixed scale, so that two normalised matrices compare by colour.
    image = ax.imshow(shown, cmap="Blues", **({"vmin": 0.0, "vmax": 1.0} if normalize else {}))
    ax.set_xticks(range(len(class_names)), class_names, rotation=45, ha="right")
    ax.set_yticks(range(len(class_names)), class_names)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            label = f"{shown[i, j]:.2f}" if normalize else str(matrix[i, j])
            ax.text(j, i, label, ha="center", va="center", color=text_colour_on(image.cmap(image.norm(shown[i, j]))))
    if title:
        ax.set_title(title)
    return ax


__all__ = ["confusion_matrix_plot", "document_figure", "document_html"]
