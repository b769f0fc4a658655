"""BahdanauAttention against the lecture's equations, computed in NumPy."""

import keras
import numpy as np
import pytest
from keras import ops

from course_lib.decoders import AttentionGRUDecoder
from course_lib.gradients import value_and_gradients
from course_lib.layers import BahdanauAttention, masked_softmax
from course_lib.layers.attention_pooling import AttentionPooling
from layer_testing import run_layer_test
from numpy_reference import numpy_attention

RNG = np.random.default_rng(0)


def _inputs(batch=3, src_len=7, query_dim=6, value_dim=5):
    query = RNG.normal(size=(batch, query_dim)).astype("float32")
    values = RNG.normal(size=(batch, src_len, value_dim)).astype("float32")
    return query, values


@pytest.mark.parametrize("use_bias", [False, True])
def test_matches_numpy_formula(use_bias):
    query, values = _inputs()
    layer = BahdanauAttention(4, use_bias=use_bias)
    context, weights = layer(query, values)
    U_att, W_att, v_att = (np.asarray(w) for w in (layer.query_kernel, layer.key_kernel, layer.score_vector))
    bias = np.asarray(layer.bias) if use_bias else None
    if use_bias:  # a non-zero bias, so that the test can see it
        layer.bias.assign(RNG.normal(size=(4,)).astype("float32"))
        bias = np.asarray(layer.bias)
        context, weights = layer(query, values)
    expected_context, expected_weights = numpy_attention(query, values, U_att, W_att, v_att, bias=bias)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(context, expected_context, atol=1e-5)


def test_weights_sum_to_one_and_many_queries_match_single_queries():
    query, values = _inputs()
    layer = BahdanauAttention(8)
    _, weights = layer(query, values)
    np.testing.assert_allclose(np.sum(weights, axis=-1), 1.0, atol=1e-6)
    block = np.stack([query, query[::-1]], axis=1)  # (batch, 2, query_dim)
    context_block, weights_block = layer(block, values)
    for q in range(2):
        context_single, weights_single = layer(block[:, q], values)
        np.testing.assert_allclose(weights_block[:, q], weights_single, atol=1e-6)
        np.testing.assert_allclose(context_block[:, q], context_single, atol=1e-6)


def test_masked_positions_get_exactly_zero_and_padding_changes_nothing():
    query, values = _inputs(batch=2, src_len=5)
    mask = np.array([[True, True, True, False, False], [True, True, True, True, True]])
    layer = BahdanauAttention(8)
    context, weights = layer(query, values, mask=mask)
    weights = np.asarray(weights)
    assert np.all(weights[0, 3:] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    # The same first sentence with three more padding positions of junk values.
    junk = RNG.normal(size=(2, 3, values.shape[-1])).astype("float32") * 100
    padded_values = np.concatenate([values, junk], axis=1)
    padded_mask = np.concatenate([mask, np.zeros((2, 3), bool)], axis=1)
    padded_context, padded_weights = layer(query, padded_values, mask=padded_mask)
    np.testing.assert_allclose(padded_context, context, atol=1e-5)
    np.testing.assert_allclose(np.asarray(padded_weights)[:, :5], weights, atol=1e-6)
    assert np.all(np.asarray(padded_weights)[:, 5:] == 0.0)


def test_a_block_of_queries_takes_one_mask_row_per_query():
    """A `(batch, num_queries, src_len)` mask: each query is scored as if alone with its own row (a causal mask
    here), matching NumPy; a query whose row is all padding gets zeros; the Keras mask of `values` still applies."""
    query_dim, batch, queries, src_len = 6, 2, 4, 4
    block = RNG.normal(size=(batch, queries, query_dim)).astype("float32")
    values = RNG.normal(size=(batch, src_len, 5)).astype("float32")
    causal = np.tril(np.ones((queries, src_len), bool))  # query q sees positions 0..q
    mask = np.broadcast_to(causal, (batch, queries, src_len)).copy()
    mask[1, 2] = False  # a row with no real position
    layer = BahdanauAttention(3)
    context, weights = (np.asarray(x) for x in layer(block, values, mask=mask))
    U_att, W_att, v_att = (np.asarray(w) for w in (layer.query_kernel, layer.key_kernel, layer.score_vector))
    for q in range(queries):
        rows = [b for b in range(batch) if mask[b, q].any()]
        expected_context, expected_weights = numpy_attention(
            block[rows, q], values[rows], U_att, W_att, v_att, mask=mask[rows, q])
        np.testing.assert_allclose(weights[rows, q], expected_weights, atol=1e-6)
        np.testing.assert_allclose(context[rows, q], expected_context, atol=1e-5)
    assert np.all(weights[~mask] == 0.0) and np.all(np.isfinite(context))
    assert np.all(weights[1, 2] == 0.0) and np.all(context[1, 2] == 0.0)
    carried = np.array([[True, True, True, False], [True] * 4])
    _, joined = layer(block, values, mask=mask, values_mask=carried)
    joined = np.asarray(joined)
    assert np.all(joined[0, :, 3] == 0.0) and np.all(joined[~mask] == 0.0)
    np.testing.assert_allclose(joined[0, :3], weights[0, :3], atol=1e-6)  # rows that never saw position 3


def test_all_masked_row_gives_zeros_not_nan():
    query, values = _inputs(batch=2, src_len=4)
    mask = np.array([[False] * 4, [True, False, True, False]])
    context, weights = BahdanauAttention(8)(query, values, mask=mask)
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    assert np.all(np.asarray(weights)[0] == 0.0) and np.all(np.asarray(context)[0] == 0.0)
    np.testing.assert_allclose(np.asarray(weights)[1].sum(), 1.0, atol=1e-6)


def test_one_source_position_gets_weight_one_without_a_warning():
    import warnings

    query, values = _inputs(batch=2, src_len=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Keras warns about a softmax over one position ("did you mean sigmoid?")
        context, weights = BahdanauAttention(8)(query, values, mask=np.array([[True], [False]]))
    np.testing.assert_array_equal(np.asarray(weights), [[1.0], [0.0]])
    np.testing.assert_allclose(np.asarray(context), [values[0, 0], np.zeros(5)], atol=1e-6)


def test_cached_keys_give_the_same_result():
    query, values = _inputs()
    layer = BahdanauAttention(8)
    context, weights = layer(query, values)
    keys = layer.project_keys(values)
    assert tuple(keys.shape) == (3, 7, 8)
    cached_context, cached_weights = layer(query, values, projected_keys=keys)
    np.testing.assert_allclose(cached_context, context, atol=1e-6)
    np.testing.assert_allclose(cached_weights, weights, atol=1e-6)


def test_self_test_q6_parameter_count():
    layer = BahdanauAttention(128, use_bias=False)
    layer(np.zeros((1, 512), "float32"), np.zeros((1, 3, 256), "float32"))
    assert layer.count_params() == 128 * 512 + 128 * 256 + 128 == 98_432
    assert tuple(layer.query_kernel.shape) == (512, 128)  # U_att (acts on s_{t-1})
    assert tuple(layer.key_kernel.shape) == (256, 128)  # W_att (acts on h_j)


def test_gradients_reach_U_W_v():
    query, values = _inputs()
    layer = BahdanauAttention(8)
    layer.build(query.shape, values.shape)

    def loss():
        context, _ = layer(query, values)
        return ops.sum(context**2)

    _, gradients = value_and_gradients(loss, layer.trainable_weights)
    by_name = dict(zip([w.name for w in layer.trainable_weights], gradients))
    for name in ("U_att", "W_att", "v_att"):
        assert by_name[name] is not None and np.any(np.asarray(by_name[name]) != 0), name


def test_standard_layer_checks():
    query, values = _inputs(batch=2, src_len=5)
    mask = np.array([[True, True, True, False, False], [True] * 5])

    def padded_kwargs():
        junk = np.full((2, 2, values.shape[-1]), 7.0, "float32")
        return {
            "query": query,
            "values": np.concatenate([values, junk], axis=1),
            "mask": np.concatenate([mask, np.zeros((2, 2), bool)], axis=1),
        }

    def compare(original, padded):
        np.testing.assert_allclose(padded[0], original[0], atol=1e-5)
        np.testing.assert_allclose(padded[1][:, :5], original[1], atol=1e-6)

    run_layer_test(
        BahdanauAttention,
        {"units": 4},
        {"query": query, "values": values, "mask": mask},
        expected_output_shapes=[(2, 5), (2, 5)],
        padding_check=(padded_kwargs(), compare),
    )


@pytest.mark.parametrize(
    "query_shape, values_shape, mask_shape, message",
    [
        ((2, 3, 4, 5), (2, 5, 4), None, "query.shape"),
        ((2, 4), (2, 5), None, "values.shape"),
        ((3, 4), (2, 5, 4), None, "query.shape"),
        ((2, 4), (2, 5, 4), (2, 6), "mask.shape"),
        ((2, 4), (2, 5, 4), (2, 5, 1), "mask.shape"),
        ((2, 4), (2, 5, 4), (2, 1, 5), "mask.shape"),  # one row per query needs a block of queries
        ((2, 3, 4), (2, 5, 4), (2, 2, 5), "mask.shape"),  # 3 queries, 2 rows
        ((2, 3, 4), (2, 5, 4), (2, 3, 6), "mask.shape"),
    ],
)
def test_bad_input_raises_value_error_saying_what_was_received(query_shape, values_shape, mask_shape, message):
    layer = BahdanauAttention(4)
    kwargs = {} if mask_shape is None else {"mask": np.ones(mask_shape, bool)}
    with pytest.raises(ValueError, match=f"Received: .*{message.replace('.', '[.]')}"):
        layer(np.zeros(query_shape, "float32"), np.zeros(values_shape, "float32"), **kwargs)


def test_units_must_be_positive():
    with pytest.raises(ValueError, match="Received: units=0"):
        BahdanauAttention(0)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_all_masked_row_gives_zeros_not_nan(policy):
    # In float16 the padding score -1e9 rounds to -inf; the softmax must not
    # turn an all-padding row into NaN.
    query, values = _inputs(batch=2, src_len=4)
    mask = np.array([[False] * 4, [True, False, True, False]])
    context, weights = BahdanauAttention(8, dtype=policy)(query, values, mask=mask)
    context, weights = np.asarray(ops.cast(context, "float32")), np.asarray(ops.cast(weights, "float32"))
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    assert np.all(weights[0] == 0.0) and np.all(context[0] == 0.0)
    np.testing.assert_allclose(weights[1].sum(), 1.0, atol=1e-2)


@pytest.mark.parametrize("mask", [np.array([[0, 0, 0, -1e9, -1e9]] * 3, "float32"),  # an additive mask
                                  np.array([[1, 1, 1, 0.5, 0]] * 3, "float32")])  # a fractional one
def test_a_float_mask_is_refused_not_cast_to_booleans(mask):
    # Cast to booleans, the additive mask kept exactly the padding: all the weight went to positions 3 and 4.
    query, values = _inputs(src_len=5)
    for layer in (BahdanauAttention(4), AttentionPooling(4)):
        arguments = (query, values) if isinstance(layer, BahdanauAttention) else (values,)
        with pytest.raises(ValueError, match="must be boolean.*Received: mask.dtype=float32"):
            layer(*arguments, mask=mask)
    with pytest.raises(ValueError, match="Received: mask.dtype=float32"):
        masked_softmax(np.zeros((3, 5), "float32"), mask)
    # `values_mask` (and `mask` given with it) used to be cast to booleans before any check.
    boolean = np.array([[True, True, True, False, False]] * 3)
    for masks in (dict(values_mask=mask), dict(mask=mask, values_mask=boolean), dict(mask=boolean, values_mask=mask)):
        with pytest.raises(ValueError, match="must be boolean.*Received: mask.dtype=float32"):
            BahdanauAttention(4)(query, values, **masks)
    _, weights = BahdanauAttention(4)(query, values, mask=np.array([[1, 1, 1, 0, 0]] * 3, "int32"))
    np.testing.assert_array_equal(np.asarray(weights)[:, 3:], 0.0)  # 0/1 integers still work
    _, weights = BahdanauAttention(4)(query, values, mask=np.ones((3, 5), "int32"), values_mask=boolean)
    np.testing.assert_array_equal(np.asarray(weights)[:, 3:], 0.0)


@pytest.mark.skipif(keras.backend.backend() == "jax", reason="JAX's float64 ops on the CPU differ from NumPy by "
                    "up to about 1e-8, even with JAX_ENABLE_X64 (measured); the dtypes are checked in test_seq2seq.py")
def test_float64_policy_keeps_the_softmax_in_float64():
    # Under a mixed policy the softmax runs in float32; under float64 it must not drop to float32
    # (it did: weights off the NumPy formula by about 3e-8).
    query, values = (array.astype("float64") for array in _inputs())
    mask = np.ones((3, 7), bool)
    mask[1, 4:] = False
    layer = BahdanauAttention(4, dtype="float64")
    context, weights = layer(query, values, mask=mask)
    assert keras.backend.standardize_dtype(weights.dtype) == "float64"
    U_att, W_att, v_att = (np.asarray(w) for w in (layer.query_kernel, layer.key_kernel, layer.score_vector))
    expected_context, expected_weights = numpy_attention(query, values, U_att, W_att, v_att, mask=mask)
    np.testing.assert_allclose(np.asarray(weights), expected_weights, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(context), expected_context, rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    "query_shape, values_shape, message",
    [((2, 5), (2, 5, 4), r"query.shape=\(2, 5\)"), ((2, 3), (2, 5, 7), r"values.shape=\(2, 5, 7\)")],
)
def test_inputs_of_another_size_after_build_raise_value_error(query_shape, values_shape, message):
    layer = BahdanauAttention(4)
    layer(np.zeros((2, 3), "float32"), np.zeros((2, 5, 4), "float32"))
    with pytest.raises(ValueError, match=f"Received: {message}"):
        layer(np.zeros(query_shape, "float32"), np.zeros(values_shape, "float32"))


def test_units_must_not_be_a_bool():
    with pytest.raises(ValueError, match="Received: units=True"):
        BahdanauAttention(True)


def test_units_may_be_a_numpy_integer_but_not_a_fraction():
    assert BahdanauAttention(np.int64(6)).units == 6
    with pytest.raises(ValueError, match="whole number >= 1. Received: units=2.5"):
        BahdanauAttention(2.5)


def test_project_keys_before_the_layer_has_weights_says_what_to_do():
    _, values = _inputs()
    with pytest.raises(ValueError, match=r"call the layer once.*Received: values.shape=\(3, 7, 5\)"):
        BahdanauAttention(8).project_keys(values)


def test_bahdanau_attention_reads_the_keras_mask_that_values_carry():
    """In a functional model the padding of `values` arrives as Keras's implicit mask, not as `mask=`."""
    keras.utils.set_random_seed(0)
    source = keras.Input((None,), dtype="int32")
    query = keras.Input((6,))
    values = keras.layers.GRU(6, return_sequences=True)(keras.layers.Embedding(10, 4, mask_zero=True)(source))
    context, weights = BahdanauAttention(5)(query, values)
    model = keras.Model([source, query], [context, weights])
    tokens = np.array([[3, 4, 0, 0], [5, 6, 7, 8]], "int32")
    _, weights = model([tokens, np.ones((2, 6), "float32")])
    weights = np.asarray(weights)
    assert np.all(weights[0, 2:] == 0.0), weights  # padding gets no weight
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


def test_an_explicit_mask_and_the_mask_values_carry_both_apply():
    """Padding marked by either mask gets no weight: the two are joined with AND, not OR."""
    query = RNG.normal(size=(2, 6)).astype("float32")
    values = RNG.normal(size=(2, 4, 5)).astype("float32")
    explicit = np.array([[True, False, True, True], [True, True, True, True]])
    carried = np.array([[True, True, True, False], [True, True, True, True]])
    _, weights = BahdanauAttention(3)(query, values, mask=explicit, values_mask=carried)
    weights = np.asarray(weights)
    assert np.all(weights[0, [1, 3]] == 0.0) and np.all(weights[0, [0, 2]] > 0.0), weights
    assert np.all(weights[1] > 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("build_model, received", [
    (lambda Input: BahdanauAttention(3)(Input((6,), batch_size=1), Input((4, 5), batch_size=2)),
     r"query.shape=\(1, 6\), values.shape=\(2, 4, 5\)"),
    (lambda Input: BahdanauAttention(3)(Input((6,)), Input((5,))), r"values.shape=\(None, 5\)"),
    (lambda Input: BahdanauAttention(3)(Input((6,)), Input((4, 5)), values_mask=Input((3,), dtype="bool")),
     r"mask.shape=\(None, 3\)"),
    (lambda Input: AttentionPooling(3)(Input((4, 5)), mask=Input((3,), dtype="bool")), r"mask.shape=\(None, 3\)"),
    (lambda Input: AttentionPooling(3)(Input((4, 5)), mask=Input((4,), dtype="float32")), r"mask.dtype=float32"),
    (lambda Input: AttentionGRUDecoder(12, 4, 6)(Input((3,), dtype="int32"), Input((4, 5)), Input((6,)),
                                                 source_mask=Input((5,), dtype="bool")), r"mask.shape=\(None, 5\)"),
])
def test_symbolic_inputs_get_the_same_checks_as_tensors(build_model, received):
    """On `keras.Input`s Keras built the output from `compute_output_shape` alone, so a functional model with
    mismatched inputs was built silently and failed only when it ran."""
    with pytest.raises(ValueError, match=received):
        build_model(keras.Input)


def test_symbolic_inputs_that_fit_give_the_output_shapes():
    context, weights = BahdanauAttention(3)(keras.Input((2, 6)), keras.Input((None, 5)),
                                            values_mask=keras.Input((None,), dtype="bool"))
    assert (context.shape, weights.shape) == ((None, 2, 5), (None, 2, None))
    pooled, weights = AttentionPooling(3)(keras.Input((None, 5)), mask=keras.Input((None,), dtype="bool"))
    assert (pooled.shape, weights.shape) == ((None, 5), (None, None))
