"""The encoder-decoder recipe, once per application of the lecture's table.

Every application is the same five answers: data, encoder, decoder,
parameters, loss (the algorithm is always gradient descent with
backpropagation). `build_recipe(name)` builds the model from course_lib parts
(`GRUEncoder`, `PlainGRUDecoder`, `Seq2Seq`, `SmallCNNEncoder`) and Keras
layers, on small generated inputs, and returns a `Recipe`: the card, the
model, one batch, and `train_step()`.

    recipe = build_recipe("video_classification")
    print(recipe.card)                     # data, encoder, decoder, ... and the formula
    assert recipe.card.formula_count == recipe.model.count_params()
    recipe.train_step()                    # (loss before, loss after) on the batch
"""

from dataclasses import dataclass

import keras
import numpy as np
from keras import ops

from course_lib.data import recipe_inputs
from course_lib.decoders.plain_gru import PlainGRUDecoder
from course_lib.encoders.gru_encoder import GRUEncoder
from course_lib.encoders.small_cnn import SmallCNNEncoder
from course_lib.gradients import value_and_gradients
from course_lib.layers.precision import at_least_float32
from course_lib.losses import MaskedTokenLoss
from course_lib.models.recipe_cards import (
    RecipeCard,
    attention_count,
    cnn_count,
    dense_count,
    embedding_count,
    gru_count,
)
from course_lib.models.seq2seq import Seq2Seq

SEQUENCE_CE = "sum of cross-entropies -sum_t log P(y_t = l_t | y_<t, x) (averaged over real tokens)"
RNN_DECODER = "s_t = RNN(s_{t-1}, e(y_{t-1})), P(y_t | y_<t, x) = softmax(V s_t + b)"


@dataclass
class RecipeSizes:
    """The sizes every formula is written in (small, so a step takes milliseconds)."""

    vocab_size: int = 24
    embedding_dim: int = 8
    units: int = 16
    image_size: int = 16
    filters: tuple = (4, 8)
    image_vector: int = 32
    frames: int = 4
    answers: int = 4
    classes: int = 2
    batch: int = 8
    source_length: int = 6
    target_length: int = 5
    document_length: int = 12
    summary_length: int = 4
    attention_units: int = 12


@dataclass
class Recipe:
    name: str
    card: RecipeCard
    model: keras.Model
    inputs: dict
    targets: np.ndarray
    loss: object = None

    def check_parameter_count(self):
        """Raises ValueError if Keras's count differs from the card's formula."""
        built = self.model.count_params()
        if built != self.card.formula_count:
            raise ValueError(
                f"{self.name}: the formula gives {self.card.formula_count} parameters, the model has {built}."
            )
        return built

    def train_step(self, learning_rate=1e-2):
        """One gradient step on the recipe's batch; returns `(loss_before, loss_after)`.

        Runs eagerly (no graph tracing), so a step on these toy sizes takes a
        fraction of a second. On TensorFlow it also checks that a gradient
        reaches every weight (JAX gives unreached weights zeros, not None).
        """
        optimizer = keras.optimizers.Adam(learning_rate)
        inputs = {key: ops.convert_to_tensor(value) for key, value in self.inputs.items()}
        before, gradients = value_and_gradients(
            lambda: self.loss(self.targets, self.model(inputs, training=True)), self.model.trainable_weights
        )
        missing = [w.path for w, g in zip(self.model.trainable_weights, gradients) if g is None]
        if missing:
            raise ValueError(f"{self.name}: no gradient reaches {missing}")
        optimizer.apply_gradients(zip(gradients, self.model.trainable_weights))
        after = self.loss(self.targets, self.model(inputs, training=False))
        return float(before), float(after)


# -- the pieces -------------------------------------------------------------------


def _plain_decoder_terms(sizes, option=1, encoding_dim=None):
    extra = (encoding_dim or sizes.units) if option == 2 else 0
    return [
        ("E_dec", "target embedding e(y)", embedding_count(sizes.vocab_size, sizes.embedding_dim)),
        ("U_dec,W_dec", f"decoder GRU (input {sizes.embedding_dim + extra})", gru_count(sizes.embedding_dim + extra, sizes.units)),
        ("V, b", "output layer softmax(V s_t + b)", dense_count(sizes.units, sizes.vocab_size)),
    ]


def _text_encoder_terms(sizes, symbol="enc"):
    return [
        (f"E_{symbol}", "source embedding", embedding_count(sizes.vocab_size, sizes.embedding_dim)),
        (f"U_{symbol},W_{symbol}", "encoder GRU", gru_count(sizes.embedding_dim, sizes.units)),
    ]


def _image_cnn_terms(sizes):
    side = sizes.image_size // 2 ** len(sizes.filters)
    flat = side * side * sizes.filters[-1]
    return [
        ("W_conv", f"CNN filters {sizes.filters}", cnn_count(sizes.filters)),
        ("W_fc", f"fc layer ({flat} -> {sizes.image_vector}), the fc7 analogue", dense_count(flat, sizes.image_vector)),
    ]


def _frame_cnn(sizes):
    """The per-frame CNN of a video encoder: two 3 x 3 conv layers and a global average."""
    return keras.Sequential(
        [
            keras.layers.Rescaling(1 / 255.0),
            keras.layers.Conv2D(sizes.filters[0], 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(sizes.filters[1], 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
        ],
        name="frame_cnn",
    )


def _video_encoder(videos, sizes):
    """RNN of CNNs: `h_t = GRU(h_{t-1}, CNN(frame_t))`; returns `(h_1..h_T, h_T)`."""
    frame_codes = keras.layers.TimeDistributed(_frame_cnn(sizes), name="cnn_per_frame")(videos)  # (batch, frames, f2)
    outputs, last = keras.layers.GRU(sizes.units, return_sequences=True, return_state=True, name="frame_rnn")(frame_codes)
    return outputs, last  # (batch, frames, units), (batch, units)


def _video_terms(sizes):
    return [
        ("W_conv", f"frame CNN filters {tuple(sizes.filters[:2])}", cnn_count(sizes.filters[:2])),
        ("U_enc,W_enc", f"GRU over the frame codes ({sizes.filters[1]} each: the last conv, averaged)",
         gru_count(sizes.filters[1], sizes.units)),
    ]


def _seq2seq_recipe(name, task, data, sizes, kind, source_length, target_length, option=1, attention=False,
                    encoder_text=None, seed=0):
    model = Seq2Seq(
        sizes.vocab_size, sizes.vocab_size, embedding_dim=sizes.embedding_dim, units=sizes.units,
        attention=attention, option=option, attention_units=sizes.attention_units if attention else None,
        name=name,
    )
    model.build()
    source, target_in, target_out = recipe_inputs.sequence_pairs(
        kind, sizes.batch, sizes.vocab_size, sizes.vocab_size, source_length, target_length, seed=seed
    )
    terms = _text_encoder_terms(sizes)
    if attention:
        decoder = "e_jt = v_att^T tanh(U_att s_{t-1} + W_att h_j), c_t = sum_j alpha_jt h_j, s_t = GRU(s_{t-1}, [e(y_{t-1}); c_t]), softmax(V s_t + b)"
        parameters = "U_dec, V, W_dec, U_enc, W_enc, b, U_att, W_att, v_att"
        terms += [
            ("E_dec", "target embedding e(y)", embedding_count(sizes.vocab_size, sizes.embedding_dim)),
            ("U_att,W_att,v_att", "scoring network (no bias)", attention_count(sizes.units, sizes.units, sizes.attention_units)),
            ("U_dec,W_dec", "decoder GRU (input [e(y); c_t])", gru_count(sizes.embedding_dim + sizes.units, sizes.units)),
            ("V, b", "output layer", dense_count(sizes.units, sizes.vocab_size)),
        ]
    else:
        decoder = RNN_DECODER if option == 1 else "s_0 = 0, s_t = RNN(s_{t-1}, [e(y_{t-1}); h_T]) (option 2), softmax(V s_t + b)"
        parameters = "U_dec, V, W_dec, U_enc, W_enc, b"
        terms += _plain_decoder_terms(sizes, option)
    card = RecipeCard(
        task=task, data=data,
        encoder=encoder_text or "h_t = RNN(h_{t-1}, e(x_t)), s_0 = h_T",
        decoder=decoder, parameters=parameters, loss=SEQUENCE_CE, terms=terms,
    )
    return Recipe(name, card, model, {"source": source, "target_in": target_in}, target_out,
                  loss=MaskedTokenLoss())


# -- one builder per row of the table ---------------------------------------------------


def image_captioning(sizes, seed=0):
    """CNN encoder, `s_0 = tanh(W_proj fc(I) + b_proj)`, RNN decoder (option 1)."""
    images = keras.Input((sizes.image_size, sizes.image_size, 3), name="image")
    target_in = keras.Input((None,), dtype="int32", name="target_in")
    locations, image_vector = SmallCNNEncoder(sizes.filters, vector_dim=sizes.image_vector, name="cnn")(images)
    initial_state = keras.layers.Dense(sizes.units, activation="tanh", name="W_proj")(image_vector)  # (batch, units)
    logits, _ = PlainGRUDecoder(sizes.vocab_size, sizes.embedding_dim, sizes.units, option=1, name="decoder")(
        target_in, locations, initial_state
    )
    model = keras.Model({"image": images, "target_in": target_in}, logits, name="image_captioning")
    pictures, colours = recipe_inputs.images(sizes.batch, sizes.image_size, seed=seed)
    caption_in, caption_out = recipe_inputs.caption_tokens(colours, sizes.vocab_size, sizes.target_length)
    card = RecipeCard(
        task="Image captioning",
        data="{image_i, caption_i}: a coloured square -> a caption fixed by its colour",
        encoder=(
            "s_0 = tanh(W_proj CNN(x_i) + b_proj) (CNN = conv blocks + fc, the fc7 analogue; "
            "W_proj maps it to the state size)"
        ),
        decoder=RNN_DECODER,
        parameters="U_dec, V, W_dec, W_conv, b (+ W_proj, b_proj)",
        loss=SEQUENCE_CE,
        terms=_image_cnn_terms(sizes)
        + [("W_proj", "fc -> s_0 projection", dense_count(sizes.image_vector, sizes.units))]
        + _plain_decoder_terms(sizes),
    )
    return Recipe("image_captioning", card, model, {"image": pictures, "target_in": caption_in}, caption_out,
                  loss=MaskedTokenLoss())


def textual_entailment(sizes, seed=0):
    return _seq2seq_recipe(
        "textual_entailment", "Textual entailment (option 2)",
        "{premise_i, hypothesis_i}: token sequences", sizes, "entailment",
        sizes.source_length, sizes.target_length, option=2,
        encoder_text="h_t = RNN(h_{t-1}, e(x_t)); h_T joins every decoder input (option 2)", seed=seed,
    )


def machine_translation(sizes, seed=0):
    return _seq2seq_recipe(
        "machine_translation", "Machine translation", "{source_i, target_i}: sentences (word ids)",
        sizes, "translation", sizes.source_length, sizes.target_length, seed=seed,
    )


def machine_translation_attention(sizes, seed=0):
    return _seq2seq_recipe(
        "machine_translation_attention", "Machine translation with attention (encode, attend, decode)",
        "{source_i, target_i}: the same pairs; nobody supplies the alphas", sizes, "translation",
        sizes.source_length, sizes.target_length, attention=True,
        encoder_text="h_j = RNN(h_{j-1}, e(x_j)), s_0 = h_T, all h_j kept for attention", seed=seed,
    )


def transliteration(sizes, seed=0):
    return _seq2seq_recipe(
        "transliteration", "Transliteration", "{word_i, word_in_other_script_i}: character ids",
        sizes, "transliteration", sizes.source_length, sizes.source_length,
        encoder_text="h_t = RNN(h_{t-1}, e(char_t)), s_0 = h_T", seed=seed,
    )


def image_question_answering(sizes, seed=0):
    """Two encoders joined: `s = [h~_T; h^_I]`, `P(y | q, I) = softmax(V s + b)`."""
    images = keras.Input((sizes.image_size, sizes.image_size, 3), name="image")
    question = keras.Input((None,), dtype="int32", name="question")
    _, image_code = SmallCNNEncoder(sizes.filters, vector_dim=sizes.image_vector, name="cnn")(images)  # h^_I
    _, question_code, _ = GRUEncoder(sizes.vocab_size, sizes.embedding_dim, sizes.units, name="question_rnn")(question)
    joined = keras.layers.Concatenate(name="s")([question_code, image_code])  # (batch, units + image_vector)
    logits = keras.layers.Dense(sizes.answers, dtype=at_least_float32(keras.config.dtype_policy()), name="V")(joined)
    model = keras.Model({"image": images, "question": question}, logits, name="image_question_answering")
    pictures, colours = recipe_inputs.images(sizes.batch, sizes.image_size, seed=seed)
    questions = recipe_inputs.questions(colours, sizes.vocab_size, sizes.source_length, seed=seed)
    card = RecipeCard(
        task="Image question answering",
        data="{(image_i, question_i), answer_i}: answer = the square's colour",
        encoder="h^_I = CNN(I), h~_t = RNN(h~_{t-1}, q_t), s = [h~_T; h^_I]",
        decoder="P(y | q, I) = softmax(V s + b) over the answer words",
        parameters="V, b, U_q, W_q, W_conv",
        loss="-log P(y = l | I, q)",
        terms=_image_cnn_terms(sizes)
        + _text_encoder_terms(sizes, "q")
        + [("V, b", "answer layer on [h~_T; h^_I]", dense_count(sizes.units + sizes.image_vector, sizes.answers))],
    )
    return Recipe("image_question_answering", card, model, {"image": pictures, "question": questions},
                  colours.astype("int32"), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def document_summarization(sizes, seed=0):
    return _seq2seq_recipe(
        "document_summarization", "Document summarization", "{document_i, summary_i}: long -> short token sequence",
        sizes, "summarization", sizes.document_length, sizes.summary_length,
        encoder_text="h_t = RNN(h_{t-1}, e(w_t)) over the document's words, s_0 = h_T", seed=seed,
    )


def video_captioning(sizes, seed=0):
    """RNN of CNNs over frames, `s_0 = h_T`, RNN decoder."""
    videos = keras.Input((sizes.frames, sizes.image_size, sizes.image_size, 3), name="video")
    target_in = keras.Input((None,), dtype="int32", name="target_in")
    frame_states, last = _video_encoder(videos, sizes)
    logits, _ = PlainGRUDecoder(sizes.vocab_size, sizes.embedding_dim, sizes.units, option=1, name="decoder")(
        target_in, frame_states, last
    )
    model = keras.Model({"video": videos, "target_in": target_in}, logits, name="video_captioning")
    clips, directions = recipe_inputs.videos(sizes.batch, sizes.frames, sizes.image_size, seed=seed)
    caption_in, caption_out = recipe_inputs.caption_tokens(directions, sizes.vocab_size, sizes.target_length)
    card = RecipeCard(
        task="Video captioning",
        data="{video_i, description_i}: a square moving left or right -> a description",
        encoder="h_t = RNN(h_{t-1}, CNN(frame_t)) (RNN of CNNs, TimeDistributed CNN + GRU), s_0 = h_T",
        decoder=RNN_DECODER,
        parameters="U_dec, W_dec, V, b, W_conv, U_enc, W_enc",
        loss=SEQUENCE_CE,
        terms=_video_terms(sizes) + _plain_decoder_terms(sizes),
    )
    return Recipe("video_captioning", card, model, {"video": clips, "target_in": caption_in}, caption_out,
                  loss=MaskedTokenLoss())


def video_classification(sizes, seed=0):
    """RNN of CNNs over frames, `P(y | video) = softmax(V h_T + b)`."""
    videos = keras.Input((sizes.frames, sizes.image_size, sizes.image_size, 3), name="video")
    _, last = _video_encoder(videos, sizes)
    logits = keras.layers.Dense(sizes.classes, dtype=at_least_float32(keras.config.dtype_policy()), name="V")(last)
    model = keras.Model({"video": videos}, logits, name="video_classification")
    clips, directions = recipe_inputs.videos(sizes.batch, sizes.frames, sizes.image_size, seed=seed)
    card = RecipeCard(
        task="Video classification",
        data="{video_i, activity_i}: which way the square moves",
        encoder="h_t = RNN(h_{t-1}, CNN(frame_t)), s = h_T",
        decoder="P(y | video) = softmax(V s + b)",
        parameters="V, b, W_conv, U_enc, W_enc",
        loss="-log P(y = l | video)",
        terms=_video_terms(sizes) + [("V, b", "activity layer", dense_count(sizes.units, sizes.classes))],
    )
    return Recipe("video_classification", card, model, {"video": clips}, directions.astype("int32"),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def dialog(sizes, seed=0):
    return _seq2seq_recipe(
        "dialog", "Dialog", "{utterance_i, response_i}: token sequences", sizes, "dialog",
        sizes.source_length, sizes.target_length, seed=seed,
    )


RECIPES = {
    "image_captioning": image_captioning,
    "textual_entailment": textual_entailment,
    "machine_translation": machine_translation,
    "transliteration": transliteration,
    "image_question_answering": image_question_answering,
    "document_summarization": document_summarization,
    "video_captioning": video_captioning,
    "video_classification": video_classification,
    "dialog": dialog,
    "machine_translation_attention": machine_translation_attention,
}


def build_recipe(name, sizes=None, seed=0):
    """Builds one application's model, card and batch (see `RECIPES` for the names)."""
    if name not in RECIPES:
        raise ValueError(f"Unknown recipe. Expected one of {sorted(RECIPES)}. Received: name={name!r}")
    keras.utils.set_random_seed(seed)
    return RECIPES[name](sizes or RecipeSizes(), seed=seed)
