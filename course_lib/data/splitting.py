"""The check every train/valid/test split makes: no part that was asked for comes out empty."""

PARTS = ("train", "valid", "test")


def check_no_empty_part(sizes, fractions, what, received):
    """Raises `ValueError` when a part with a fraction above 0 got nothing (too few items for the fractions).

    Args:
        sizes, fractions: `{"train": ..., "valid": ..., "test": ...}`: each part's size and the share asked
            for it (a share of 0 asks for an empty part).
        what: what was split, plural (`"pairs"`, `"images"`), for the message.
        received: what the message reports as received.
    """
    empty = [name for name in PARTS if fractions[name] > 0 and sizes[name] == 0]
    if empty:
        raise ValueError(
            f"Too few {what} to split: the {' and '.join(empty)} part{'s' if len(empty) > 1 else ''} would be "
            f"empty. Received: {received}"
        )


__all__ = ["check_no_empty_part"]
