"""course_lib.text.columns: padding by drawn width, for printed tables of Hindi words."""

import pytest

from course_lib.text.columns import display_width, pad


def test_marks_drawn_on_a_letter_take_no_cell():
    assert display_width("कुंभ") == 2  # क + ु (below) + ं (above) + भ
    assert display_width("कमल") == 3 and display_width("kamal") == 5
    assert display_width("का") == 2  # the aa sign is a spacing mark: it takes a cell
    assert display_width("क्ष") == 2  # the virama joins two letters into one conjunct, but both count
    assert display_width("a\u200db") == 2  # a zero-width joiner takes none


def test_pad_lines_up_a_column_after_hindi_words():
    rows = [pad(word, 6) + "|" for word in ("कुंभ", "कमल", "ghar")]
    assert [display_width(row) for row in rows] == [7, 7, 7]
    assert pad("कमल", 6, ">") == "   कमल" and pad("बहुत लंबा शब्द", 3) == "बहुत लंबा शब्द"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="must be a str"):
        display_width(3)
    with pytest.raises(ValueError, match="align"):
        pad("a", 3, "^")
