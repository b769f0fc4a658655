"""Which test image to draw the attention of: the one that shows word-by-word attention most clearly."""

import numpy as np


def pick_showcase_image(part, captions, alignments, grid):
    """A shapes test image whose generated caption shows where the attention looks, with its word-by-word judgement.

    Candidates are the images with two or more objects whose generated
    caption has at least one word naming an object. Among them it prefers, in
    this order: an image captioned exactly; one where every object phrase
    names exactly one object of the image (so a hit means the very object);
    the largest share of object words whose largest weight lies on a named
    object (`metrics.captioning.object_word_hits`); then one whose objects
    all differ in colour and all differ in shape (so each colour or shape
    word, drawn in a panel of its own, fits one object: with two green
    shapes the white of "green" may cover both). Ties go to the first image.

    Args:
        part: the `ShapesSplit` the captions were generated for.
        captions: the generated captions, one string per image of `part`.
        alignments: `(images, steps, L)` attention weights behind the captions.
        grid: `(height, width)` of the attended feature map, `height * width == L`.

    Returns:
        `(index, words)`: the chosen image's index in `part`, and the list of
        dicts `object_word_hits` gives for its caption.
    """
    from course_lib.data.shapes import COLOUR_NAMES, SHAPES, object_location_masks
    from course_lib.metrics.captioning import caption_list, object_word_hits

    captions = caption_list(captions, "captions")
    alignments = np.asarray(alignments)
    height, width = grid
    if alignments.ndim != 3 or len(captions) != len(part) or len(alignments) != len(part):
        raise ValueError(
            "Need one caption and one (steps, L) alignment per image of `part`. Received: "
            f"{len(part)} images, {len(captions)} captions, alignments.shape={alignments.shape}"
        )
    if height * width != alignments.shape[-1]:
        raise ValueError(
            f"`grid` must have as many locations as the alignments. Received: grid={grid!r}, "
            f"alignments.shape={alignments.shape}"
        )
    masks = object_location_masks(part.boxes, part.image_size, height, width)  # (images, 3, L)
    judged = {}
    for index in np.flatnonzero((np.asarray(part.shapes) >= 0).sum(axis=1) >= 2):
        words = object_word_hits(captions[index].split(), alignments[index], part.colours[index],
                                 part.shapes[index], masks[index], COLOUR_NAMES, SHAPES)
        if words:
            judged[int(index)] = words
    if not judged:
        raise ValueError("No image has two or more objects and a caption naming one of them. "
                         f"Received: {len(part)} images")

    def all_differ(index):
        present = np.asarray(part.shapes[index]) >= 0  # (3,)
        colours = np.asarray(part.colours[index])[present]
        shapes = np.asarray(part.shapes[index])[present]
        return len(set(colours.tolist())) == len(colours) and len(set(shapes.tolist())) == len(shapes)

    def preference(index):
        return (
            captions[index].lower().split() == part.captions[index].lower().split(),  # captioned exactly
            all(len(word["named"]) == 1 for word in judged[index]),  # every phrase names one object
            float(np.mean([word["hit"] for word in judged[index]])),  # looked at the named object most often
            all_differ(index),  # every colour word and every shape word fits one object
        )

    index = max(judged, key=preference)
    return index, judged[index]
