"""`ChecksTokenIds`: `fit`, `evaluate` and `predict` refuse token ids outside the model's vocabularies.

An embedding lookup does not check its ids: -1 reads the table's last row, and
an id one past the end fails deep inside TensorFlow on a CPU (a GPU reads
zeros). Inside the compiled steps the values are not known, so the ids of
NumPy inputs are checked here, once per call, before Keras batches them. A
`tf.data.Dataset` is not read ahead; the course's pipelines make their ids
from a vocabulary.
"""

import numpy as np

from course_lib.layers.masking import check_token_range


class ChecksTokenIds:
    """Mixin for a `keras.Model` over token ids.

    A model names its id inputs in `token_id_sizes()`, `{input name: number
    of ids}`; a bare array passed as `x` is checked as `bare_input`, a tuple
    (or list) of arrays as `tuple_inputs` in order, and `y` as `targets_name`. Integer NumPy
    arrays (and lists) are checked; anything else goes to Keras unchanged.
    """

    bare_input = "source"
    tuple_inputs = ()
    targets_name = "targets"

    def token_id_sizes(self):
        raise NotImplementedError(f"{type(self).__name__} must implement token_id_sizes()")

    def fit(self, x=None, y=None, *args, **kwargs):
        self.check_known_token_ids(x, y)
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        self.check_known_token_ids(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        self.check_known_token_ids(x)
        return super().predict(x, *args, **kwargs)

    def check_known_token_ids(self, x, y=None):
        """Raises ValueError if an integer array in `x` or `y` holds an id its vocabulary does not have."""
        if isinstance(x, dict):
            named = dict(x)
        elif (isinstance(x, (list, tuple)) and len(x) == len(self.tuple_inputs)
              and all(isinstance(part, np.ndarray) for part in x)):  # (source, target_in), not a list of ids
            named = dict(zip(self.tuple_inputs, x))
        else:
            named = {self.bare_input: x}
        named[self.targets_name] = y
        sizes = self.token_id_sizes()
        for name, values in named.items():
            if name not in sizes or not isinstance(values, (np.ndarray, list)):
                continue
            try:
                values = np.asarray(values)
            except ValueError:  # ragged lists: Keras says what is wrong with them
                continue
            if np.issubdtype(values.dtype, np.integer):
                check_token_range(values, sizes[name], name)
