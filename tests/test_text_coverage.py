"""`text.coverage`: the tokens a vocabulary reads as <unk>, and their share."""

from course_lib.text.coverage import UNLIKE_DATA_SHARE, is_word, unknown_share, unknown_tokens
from course_lib.text.vocabulary import Vocabulary


def test_unknown_tokens_and_their_share():
    vocabulary = Vocabulary.from_texts(["the dog runs ."], level="word")
    tokens = ["the", "cat", "runs", "cat", "<pad>", "."]  # a control token written as text is unknown too
    assert unknown_tokens(vocabulary, tokens) == ["cat", "cat", "<pad>"]
    assert unknown_share(vocabulary, tokens) == 0.5
    assert unknown_share(vocabulary, []) == 0.0 and unknown_share(vocabulary, iter(["dog"])) == 0.0
    assert [is_word(token) for token in ("dog", ".", "42", "घर", "?!")] == [True, False, True, True, False]
    assert 0.11 < UNLIKE_DATA_SHARE < 0.69  # between the measured shares of like and unlike data
