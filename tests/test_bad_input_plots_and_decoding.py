"""Bad input to the plots, the reranker, the ensemble, teacher-forced scoring and the document
pipeline gets a clear ValueError instead of a misleading picture, a NaN or a raw IndexError."""

import matplotlib

matplotlib.use("Agg")
import keras  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.data.buckets import batched_log_probs  # noqa: E402
from course_lib.decoding.ensemble import Ensemble  # noqa: E402
from course_lib.decoding.rerank import rerank_scores  # noqa: E402
from course_lib.models import Seq2Seq  # noqa: E402
from course_lib.plots.attention import attention_heatmap, exact_match_by_length  # noqa: E402
from course_lib.plots.captioning import attention_overlay_grid, training_curves, upsample_attention  # noqa: E402
from course_lib.plots.documents import document_figure, document_html  # noqa: E402
from course_lib.plots.grid import attention_grid  # noqa: E402
from course_lib.text.documents import DocumentPipeline  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    model = Seq2Seq(11, 13, embedding_dim=8, units=16, max_output_length=6)
    model.build()
    return model


def test_exact_match_by_length_refuses_percentages_and_nan():
    with pytest.raises(ValueError, match=r"Received: 95.0 for model 'm' at length 3"):
        exact_match_by_length({"m": {3: 95.0}})
    with pytest.raises(ValueError, match=r"Received: nan for model 'm' at length 4"):
        exact_match_by_length({"m": {"3": 0.5, "4": float("nan")}})
    for empty in ({}, {"m": {}}):  # drew empty axes and a legend warning
        with pytest.raises(ValueError, match="Nothing to plot.*Received: results="):
            exact_match_by_length(empty)
    # A tick at every length scored: the training band's edges and the first unseen length are read off the axis.
    ax = exact_match_by_length({"m": {length: 0.5 for length in range(5, 15)}}, trained_lengths=(5, 10))
    assert list(ax.get_xticks()) == list(range(5, 15))
    ax = exact_match_by_length({"m": {3: 1.0, "4": 0.0}}, trained_lengths=(3, 3))  # the edges are fine
    assert list(ax.lines[0].get_ydata()) == [1.0, 0.0]


@pytest.mark.parametrize("trained_lengths", [(5,), (1, 2, 3), 5, (7, 3), ("a", "b")])
def test_exact_match_by_length_refuses_a_bad_trained_range(trained_lengths):
    with pytest.raises(ValueError, match=r"pair \(shortest, longest\).*Received: trained_lengths="):
        exact_match_by_length({"m": {3: 0.5}}, trained_lengths=trained_lengths)


def test_attention_heatmap_refuses_scores():
    with pytest.raises(ValueError, match=r"look like scores.*Received: weights from -2 to 3"):
        attention_heatmap([[3.0, -2.0]], ["a", "b"], ["x"])
    with pytest.raises(ValueError, match="look like scores"):  # the grid draws through attention_heatmap
        attention_grid([(np.array([[0.2, 1.5]]), ["a", "b"], ["x"])])
    assert not plt.get_fignums()  # the grid's half-drawn figure is closed
    # float32 softmax output may overshoot 1 by a rounding error: still weights
    attention_heatmap(np.array([[1.0 + 1e-7, -1e-7]]), ["a", "b"], ["x"])


def test_training_curves_refuses_a_string_and_unknown_keys():
    history = {"loss": [2.0, 1.0], "val_loss": [2.1, 1.3], "accuracy": [0.3, 0.6]}
    with pytest.raises(ValueError, match=r"Received: keys='loss'"):
        training_curves({"run": history}, keys="loss")
    with pytest.raises(ValueError, match=r"\['acuracy'\].*available: \['accuracy', 'loss', 'val_loss'\]"):
        training_curves({"run": history}, keys=("loss", "acuracy"))
    figure = training_curves({"run": history}, keys=("loss", "accuracy"))
    assert [len(axis.lines) for axis in figure.axes] == [2, 1]


def test_upsample_attention_and_document_html_refuse_nan_weights():
    weights = np.full(4, 0.25)
    weights[1] = np.nan
    with pytest.raises(ValueError, match="Received: 1 NaN or inf"):
        upsample_attention(weights, (2, 2), (8, 8))
    with pytest.raises(ValueError, match="finite.*Received"):
        document_html([["a"]], [np.nan])
    with pytest.raises(ValueError, match="finite.*Received"):
        document_html([["a", "b"]], [1.0], [[0.5, np.inf]])
    # padding beyond the words is not drawn, so it is not checked
    assert "width: 100px" in document_html([["a"]], [1.0, np.nan], [[1.0, np.nan]])


def test_document_figure_and_overlay_grid_refuse_empty_layouts():
    with pytest.raises(ValueError, match=r"`max_words_per_line` must be at least 1. Received: max_words_per_line=0"):
        document_figure([["a", "b"]], [1.0], max_words_per_line=0)
    image = np.zeros((8, 8, 3), np.uint8)
    with pytest.raises(ValueError, match=r"`grid` must be \(H, W\).*Received: grid=\(0, 0\)"):
        attention_overlay_grid(image, [], np.zeros((0, 0)), (0, 0))
    with pytest.raises(ValueError, match=r"Received: grid=\(2, 0\)"):
        upsample_attention(np.zeros(0), (2, 0), (8, 8))


def test_rerank_scores_refuses_nan_and_a_missing_weight():
    lengths = np.array([3, 3])
    with pytest.raises(ValueError, match="`direct_scores`.*Received: 1 NaN"):
        rerank_scores([[np.nan, -1.0], [-1.0, -2.0]], [[-1.0, -2.0], [-1.0, -2.0]], lengths)
    with pytest.raises(ValueError, match="`other_log_probs`.*Received: 1 NaN"):
        rerank_scores([[-1.0, -2.0], [-1.0, -2.0]], [[-1.0, np.nan], [-1.0, -2.0]], lengths)
    with pytest.raises(ValueError, match="Received: weight=None"):
        rerank_scores([[-1.0, -2.0]], [[-1.0, -2.0]], [3], weight=None)
    with pytest.raises(ValueError, match="Received: shape"):
        rerank_scores([[-1.0, -2.0]], [[-1.0, -2.0]], [np.nan])
    # an impossible candidate (-inf, as reranker_log_probs writes for an empty one) stays allowed
    combined = rerank_scores([[-1.0, -2.0]], [[-np.inf, -3.0]], [3], weight=1.0)
    assert combined[0, 0] == -np.inf and combined[0, 1] == pytest.approx(-3.0)
    # ... and weight 0 leaves the direct scores as they are (0 * -inf used to give NaN)
    np.testing.assert_array_equal(rerank_scores([[-1.0, -2.0]], [[-np.inf, -3.0]], [3], weight=0.0), [[-1.0, -2.0]])


def test_rerank_scores_refuses_bools_and_reports_the_lengths_shape_it_was_given():
    with pytest.raises(ValueError, match="Received: weight=True"):
        rerank_scores([[-1.0, -2.0]], [[-1.0, -2.0]], [3], weight=True)
    with pytest.raises(ValueError, match="other_lengths.dtype=bool"):
        rerank_scores([[-1.0, -2.0]], [[-1.0, -2.0]], [True])
    with pytest.raises(ValueError, match=r"Received: shape \(2,\)"):  # it reported the reshaped (2, 1)
        rerank_scores([[-1.0, -2.0]], [[-1.0, -2.0]], [3, 3])


def test_counts_past_int32_are_refused_by_name():
    """`generate(max_length=2**31)` raised NumPy's OverflowError."""
    from course_lib.layers.masking import check_count
    from course_lib.models import Seq2Seq

    assert check_count(2**31 - 1, "max_length") == 2**31 - 1
    with pytest.raises(ValueError, match=r"`max_length` must be at most 2147483647. Received: max_length=2147483648"):
        Seq2Seq(12, 10, embedding_dim=4, units=6).generate(np.array([[3, 4]]), max_length=2**31)


def test_the_captioner_refuses_an_overflowing_length_penalty_before_tracing():
    """It was refused only inside TensorFlow's trace, under an "in user code" traceback, and the broken
    decoding function was kept."""
    from course_lib.models.captioner import ImageCaptioner

    captioner = ImageCaptioner(vocab_size=15, encoder="features", feature_locations=4, feature_channels=8,
                               feature_vector_dim=8, embedding_dim=4, units=6, attention_units=5)
    features = {"locations": np.zeros((2, 4, 8), "float32"), "vector": np.zeros((2, 8), "float32")}
    with pytest.raises(ValueError, match="`length_penalty` is too large for `max_length`") as raised:
        captioner.generate(features, beam_width=2, length_penalty=30.0, max_length=40)
    assert "in user code" not in str(raised.value)
    assert not captioner._decode_functions
    assert captioner.generate(features, beam_width=2, max_length=3)["tokens"].shape == (2, 3)


def test_ensemble_refuses_members_that_are_not_models():
    with pytest.raises(ValueError, match=r"Received: model 0 of type int"):
        Ensemble([1, 2])
    with pytest.raises(ValueError, match=r"Received: model 1 of type str, which lacks \['source_vocab_size'"):
        Ensemble([_model(), "model"])


def test_batched_log_probs_refuses_ids_outside_the_vocabularies():
    model = _model()
    source = np.array([[4, 5, 0], [6, 7, 8]], "int32")
    target = np.array([[4, 5, 2], [6, 2, 0]], "int32")
    assert batched_log_probs(model, source, target).shape == (2,)
    with pytest.raises(ValueError, match=r"`target` holds ids outside the vocabulary \[0, 13\).*id 13"):
        batched_log_probs(model, source, np.where(target == 5, 13, target))
    with pytest.raises(ValueError, match=r"`target` holds ids outside.*id -1"):
        batched_log_probs(model, source, np.where(target == 5, -1, target))
    with pytest.raises(ValueError, match=r"`source` holds ids outside the vocabulary \[0, 11\).*id 11"):
        batched_log_probs(model, np.where(source == 8, 11, source), target)


def test_document_pipeline_words_refuses_ids_outside_the_vocabulary():
    pipeline = DocumentPipeline.from_texts(["The cat sat. The dog ran."])
    size = len(pipeline.vocabulary)
    ids, _ = pipeline.encode(["The cat sat."])
    assert pipeline.words(ids[0]) == [["the", "cat", "sat"]]
    with pytest.raises(ValueError, match=r"Received: ids with id -1"):
        pipeline.words([[4, -1]])
    with pytest.raises(ValueError, match=rf"vocabulary \[0, {size}\).*Received: ids with id {size}"):
        pipeline.words([[4, size]])


def test_training_curves_name_their_axes_in_words():
    history = {"loss": [2.0, 1.0], "token_accuracy": [0.3, 0.6], "val_token_accuracy": [0.2, 0.5]}
    figure = training_curves({"run": history})
    assert [(axis.get_title(), axis.get_ylabel()) for axis in figure.axes] == [
        ("loss", "loss"), ("token accuracy", "token accuracy")]
    plt.close(figure)


@pytest.mark.parametrize(
    "options, received",
    [(dict(beam_width=0), "beam_width=0"), (dict(beam_width=2.5), "beam_width=2.5"),
     (dict(beam_width=3, length_penalty=float("nan")), "length_penalty=nan"),
     (dict(beam_width=3, length_penalty=-1.0), "length_penalty=-1.0"),
     (dict(beam_width=3, length_penalty=70.0), "length_penalty=70.0, max_length=4")],  # 4 ** 70 overflows float32
)
def test_decoding_refuses_impossible_options(options, received):
    model = Seq2Seq(12, 10, embedding_dim=4, units=6)
    with pytest.raises(ValueError, match=f"Received: {received}"):
        model.generate(np.array([[5, 6, 7]], "int32"), max_length=4, **options)


def test_greedy_decoding_refuses_a_length_penalty_it_would_ignore():
    # `generate(beam_width=1, length_penalty=5.0)` used to decode greedily and drop the penalty without a word.
    model = Seq2Seq(12, 10, embedding_dim=4, units=6)
    source = np.array([[5, 6, 7]], "int32")
    with pytest.raises(ValueError, match=r"greedy decoding \(beam_width=1\) has one and would ignore it.*"
                                         r"Received: length_penalty=5.0, beam_width=1"):
        model.generate(source, max_length=4, length_penalty=5.0)
    with pytest.raises(ValueError, match="Received: length_penalty=0.0, beam_width=1"):
        model.generate(source, max_length=4, beam_width=1, length_penalty=0.0)
    greedy = model.generate(source, max_length=4, length_penalty=1.0)  # the default stays accepted
    np.testing.assert_array_equal(greedy["tokens"], model.generate(source, max_length=4)["tokens"])
    assert model.generate(source, max_length=4, beam_width=2, length_penalty=5.0)["tokens"].shape == (1, 4)
    from course_lib.decoding.ensemble import Ensemble

    with pytest.raises(ValueError, match="Received: length_penalty=5.0, beam_width=1"):  # an ensemble too
        Ensemble([model, model]).generate(source, max_length=4, length_penalty=5.0)
    from course_lib.models.captioner import ImageCaptioner

    captioner = ImageCaptioner(12, image_size=16, cnn_filters=(4, 8), embedding_dim=4, units=6)
    with pytest.raises(ValueError, match="Received: length_penalty=2.0, beam_width=1"):  # and a captioner
        captioner.generate({"image": np.zeros((1, 16, 16, 3), "float32")}, max_length=3, length_penalty=2.0)


def test_greedy_decoding_refuses_a_fractional_max_length():
    from course_lib.decoding.greedy import greedy_decode

    model = _model()
    encoder_outputs, initial_state, source_mask = model.encode(np.array([[5, 6, 7]], "int32"))
    memory = model.decoder.prepare_memory(encoder_outputs, initial_state, source_mask)
    with pytest.raises(ValueError, match=r"max_length=0.5"):
        greedy_decode(model.decoder, memory, model.decoder.start_state(initial_state), 1, 2, 0.5)
