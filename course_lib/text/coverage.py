"""How much of some text a vocabulary knows: the tokens it reads as `<unk>`, their share, and the share above
which a command warns that it is scoring a model on data unlike its training data."""

from course_lib.text.vocabulary import UNK

# Above this share of unknown tokens, `evaluate` (captioning, translation, transliteration) warns. Measured:
# a run scored on its own kind of data misses 6-11 % of the words (Flickr8k captions, Tatoeba sentences);
# a run scored on another kind 69-82 % (generated data against real, shapes against photos).
UNLIKE_DATA_SHARE = 0.2


def is_word(token):
    """Whether `token` holds a letter or a digit (punctuation a vocabulary knows is no known word)."""
    return any(character.isalnum() for character in token)


def unknown_tokens(vocabulary, tokens):
    """The tokens (strings) that `vocabulary` reads as `<unk>`, in order, repeats kept."""
    tokens = list(tokens)
    return [token for token, index in zip(tokens, vocabulary.lookup(tokens)) if index == UNK]  # one lookup


def unknown_share(vocabulary, tokens):
    """The share of `tokens` that `vocabulary` reads as `<unk>`; 0.0 when there are none."""
    tokens = list(tokens)
    return len(unknown_tokens(vocabulary, tokens)) / len(tokens) if tokens else 0.0
