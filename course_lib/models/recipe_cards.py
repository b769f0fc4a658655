"""Recipe cards: data, encoder, decoder, parameters, loss and algorithm of a model.

A card also carries the parameter count *written as a formula of the sizes*,
term by term, so it can be checked against what Keras actually built.
"""

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
