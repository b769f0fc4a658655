"""Recipe cards: data, encoder, decoder, parameters, loss and algorithm of a model.

A card also carries the parameter count *written as a formula of the sizes*,
term by term, so it can be checked against what Keras actually built.
"""

import re
from dataclasses import dataclass, field


# -- parameter formulas of the building blocks ------------------------------------


def dense_count(inputs, outputs):
    """`V s + b`: a `(outputs x inputs)` matrix and a bias."""
    return inputs * outputs + outputs


def embedding_count(vocab_size, embedding_dim):
    """`e(y)`: one row per token (the same as `U` times a one-hot vector)."""
    return vocab_size * embedding_dim


def gru_count(input_dim, units):
    """A GRU: for each of its 3 gates, `U` (input_dim x units), `W` (units x units)
    and two bias vectors (Keras's `reset_after` form)."""
    return 3 * (input_dim * units + units * units + 2 * units)


def conv3x3_count(in_channels, out_channels):
    """A 3 x 3 convolution with bias: `W_conv` of one layer."""
    return 9 * in_channels * out_channels + out_channels


def cnn_count(filters, in_channels=3):
    """A stack of 3 x 3 convolutions, one per entry of `filters`."""
    total, previous = 0, in_channels
    for channels in filters:
        total += conv3x3_count(previous, channels)
        previous = channels
    return total


def attention_count(query_dim, value_dim, units):
    """`U_att` (units x query_dim), `W_att` (units x value_dim), `v_att` (units)."""
    return units * query_dim + units * value_dim + units


@dataclass
class RecipeCard:
    """What the lecture asks of every application, plus the parameter formula.

    `terms` is a list of `(symbol, meaning, count)`; `formula_count` is their sum.
    """

    task: str
    data: str
    encoder: str
    decoder: str
    parameters: str
    loss: str
    algorithm: str = "gradient descent with backpropagation (through time in the RNNs, into the CNN if any)"
    terms: list = field(default_factory=list)

    @property
    def formula_count(self):
        return sum(count for _, _, count in self.terms)

    def __str__(self):
        lines = [
            f"== {self.task} ==",
            f"  data       {self.data}",
            f"  encoder    {self.encoder}",
            f"  decoder    {self.decoder}",
            f"  parameters {self.parameters}",
            f"  loss       {self.loss}",
            f"  algorithm  {self.algorithm}",
            "  parameter count by formula:",
        ]
        for symbol, meaning, count in self.terms:
            lines.append(f"    {symbol:17s} {count:>8,d}  {meaning}")
        lines.append(f"    {'total':17s} {self.formula_count:>8,d}")
        return "\n".join(lines)


# -- Keras weight names -> the card's symbols ---------------------------------------

_GRU_PARTS = {"kernel": "U_{0} (input -> state)", "recurrent_kernel": "W_{0} (state -> state)",
              "bias": "biases of U_{0}, W_{0}"}


def weight_symbol(path):
    """The card's symbol for one weight of a recipe model, from its Keras path.

    Reads the layer names that `course_lib.models.recipes` gives its models
    (`cnn`, `W_proj`, `frame_rnn`, `question_rnn`, `V`, an `encoder` and a
    `decoder`). Keras stores a matrix as (inputs, outputs), the transpose of
    the lecture's; a GRU keeps its three blocks (update gate, reset gate,
    candidate) side by side in one `kernel`.

    Args:
        path: a weight's `path`, such as `"frame_rnn/gru_cell/recurrent_kernel"`.

    Returns:
        A short string: the symbol first (`"W_enc (state -> state)"`, `"V"`,
        `"bias of W_conv"`, ...).
    """
    parts = str(path).split("/")
    layer, last = parts[:-1], parts[-1]
    matrix_or_bias = last in ("kernel", "bias")  # anything else (a norm's gamma, a running mean) has no symbol
    if last in ("U_att", "W_att", "v_att"):
        return last
    if matrix_or_bias and layer and re.fullmatch(r"conv2d(_\d+)?|block\d+_conv\d+", layer[-1]):  # the CNN's filters
        return "W_conv" if last == "kernel" else "bias of W_conv"
    if matrix_or_bias and layer[-2:] == ["cnn", "fc"]:
        return "W_fc (the fc7 analogue)" if last == "kernel" else "bias of W_fc"
    if matrix_or_bias and layer == ["W_proj"]:
        return "W_proj (fc -> s_0)" if last == "kernel" else "b_proj"
    sides = {"question_rnn": "q", "encoder": "enc", "frame_rnn": "enc", "decoder": "dec"}
    side = next((sides[name] for name in layer if name in sides), None)
    if side and layer[-1] == "gru_cell" and last in _GRU_PARTS:
        return _GRU_PARTS[last].format(side)
    if side and layer[-1] == "embedding" and last == "embeddings":
        return f"E_{side} (embedding)"
    if matrix_or_bias and layer and layer[-1] in ("V", "output"):
        return "V" if last == "kernel" else "b"
    raise ValueError(f"No card symbol for this weight. Received: path={path!r}")
