"""The image captioner: a CNN encoder and a GRU decoder, three ways to connect them."""

import keras
import numpy as np
from keras import ops

from course_lib.compiling import compile_once
from course_lib.decoders.attention_gru import AttentionGRUDecoder
from course_lib.decoders.plain_gru import PlainGRUDecoder
from course_lib.decoding.beam import beam_search, check_beam_options, check_greedy_length_penalty
from course_lib.decoding.greedy import greedy_decode
from course_lib.encoders.small_cnn import SmallCNNEncoder, check_cnn_sizes
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.location_coordinates import LocationCoordinates
from course_lib.layers.masking import (
    check_count, check_flag, check_same_batch, check_special_ids, check_unread_options,
)
from course_lib.models.checking_ids import ChecksTokenIds
from course_lib.models.building import BuildsSublayers
from course_lib.models.keeping_weights import KeepsWeightsOnError
from course_lib.models.token_compile import CompilesWithTokenDefaults

DECODERS = ("attention", "option1", "option2")
ENCODERS = ("small", "features")

# The settings of the small CNN, with their defaults: the features encoder reads none of them.
CNN_DEFAULTS = {"image_size": 48, "cnn_filters": (16, 32, 64), "vector_dim": 256, "convs_per_block": 1,
                "cnn_dropout": 0.0}
# The settings of the small CNN the attentional decoder leaves unread: it never reads the fc7 vector, so its
# encoder has no fc layer, and the dropout acts on that vector alone.
FC_DEFAULTS = {"vector_dim": 256, "cnn_dropout": 0.0}
FEATURE_DEFAULTS = {"feature_locations": None, "feature_channels": None, "feature_vector_dim": None}


def unread_settings(encoder, decoder):
    """The settings a captioner of this encoder and decoder never reads, with their defaults."""
    unread = dict(CNN_DEFAULTS) if encoder == "features" else dict(FEATURE_DEFAULTS)
    if decoder == "attention":
        unread.update(FC_DEFAULTS)
    return unread


@keras.saving.register_keras_serializable(package="course_lib")
class ImageCaptioner(ChecksTokenIds, BuildsSublayers, KeepsWeightsOnError, CompilesWithTokenDefaults, keras.Model):
    """Generates a caption word by word from an image, `P(y_t | y_<t, I)`.

    The encoder gives two views of the image `I`: a map of locations
    `a_1 .. a_L` (`L = H * W`) and one vector, the lecture's `fc7(I)`. The
    decoder (`decoder=`) uses them in one of three ways:

    * `"option1"`: `s_0 = W_proj fc7(I)` (a learnable `units x D` matrix, the
      projection the lecture mentions), then a plain GRU from `<GO>`; the image
      reaches later words only through the recurrence.
    * `"option2"`: `s_t = GRU(s_{t-1}, [e(y_{t-1}); fc7(I)])`, the image joined
      to every input, `s_0 = 0`.
    * `"attention"`: at every step `alpha_t = softmax_j(f_ATT(s_{t-1}, a_j))`
      over the `L` locations and `c_t = sum_j alpha_jt a_j` joins the input
      (the core `AttentionGRUDecoder`); `s_0 = tanh(W_init mean_j a_j)`.
      The vector cannot be attended over: it has no locations. With
      `location_coordinates=True` each `a_j` the decoder reads is
      `[a_j; y_j; x_j]`, its features followed by its place on the map
      (`LocationCoordinates`).

    Encoders (`encoder=`):

    * `"small"`: a `SmallCNNEncoder` trained end to end with the decoder;
      inputs hold `"image"` `(batch, image_size, image_size, 3)` in `[0, 255]`.
    * `"features"`: features of a frozen pretrained backbone computed once
      (see `course_lib.encoders.pretrained` and
      `course_lib.data.feature_cache`); inputs hold `"locations"`
      `(batch, L, C)` and `"vector"` `(batch, D)`.

    Called on `{"image" | "locations", "vector", "target_in"}` it returns
    teacher-forced logits `(batch, tgt_len, vocab)`, so it trains with `fit`
    (`compile` fills in `MaskedTokenLoss` and `MaskedTokenAccuracy`).

    Args:
        vocab_size: caption vocabulary size, specials included.
        decoder: "attention", "option1" or "option2".
        encoder: "small" or "features".
        image_size: side of the square input images (small encoder).
        cnn_filters, vector_dim, convs_per_block, cnn_dropout: `SmallCNNEncoder`
            settings (small encoder). `vector_dim` and `cnn_dropout` (which acts
            on the fc7 vector) are for the plain decoders: the attentional
            decoder never reads the vector.
        feature_locations, feature_channels, feature_vector_dim: the backbone's
            `L`, `C` and `D` (features encoder).
        embedding_dim, units: decoder settings.
        attention_units, deep_output: attentional decoder only (refused with
            the plain ones, which would ignore them).
        location_coordinates: append each location's row and column, scaled
            to `[-1, 1]`, to the features the attentional decoder reads
            (attentional decoder only). The small CNN's locations see a
            22 x 22-pixel window of a 48-pixel image, so they hardly know
            where they are; `docs/captioning.md` measures what the coordinates
            change on the shapes data.
        start_id, stop_id, pad_id: special token ids.
        max_output_length: default decoding length (`<stop>` included).

    A setting the chosen encoder and decoder never read (`unread_settings`) is
    refused unless it keeps its default (which `get_config` saves).

    Call arguments:
        inputs: a dict with `"image"` (small encoder) or `"locations"` and
            `"vector"` (features encoder), and `"target_in"` `(batch, tgt_len)`:
            `<GO>` followed by the caption's word ids.
        training: Python boolean.

    Returns:
        Logits `(batch, tgt_len, vocab_size)`. `forward(...)` also returns the
        attention weights `(batch, tgt_len, L)`, and `generate(...)` decodes
        greedily or with beam search.
    """

    def __init__(
        self,
        vocab_size,
        decoder="attention",
        encoder="small",
        image_size=48,
        cnn_filters=(16, 32, 64),
        vector_dim=256,
        convs_per_block=1,
        cnn_dropout=0.0,
        feature_locations=None,
        feature_channels=None,
        feature_vector_dim=None,
        embedding_dim=32,
        units=128,
        attention_units=None,
        deep_output=False,
        location_coordinates=False,
        start_id=1,
        stop_id=2,
        pad_id=0,
        max_output_length=20,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if decoder not in DECODERS:
            raise ValueError(f"`decoder` must be one of {DECODERS}. Received: decoder={decoder!r}")
        if encoder not in ENCODERS:
            raise ValueError(f"`encoder` must be one of {ENCODERS}. Received: encoder={encoder!r}")
        deep_output = check_flag(deep_output, "deep_output")  # "no" is truthy
        location_coordinates = check_flag(location_coordinates, "location_coordinates")
        if decoder != "attention":
            check_unread_options(
                {"attention_units": attention_units, "deep_output": deep_output,
                 "location_coordinates": location_coordinates},
                {"attention_units": None, "deep_output": False, "location_coordinates": False},
                "`attention_units`, `deep_output` and `location_coordinates` apply to the attentional decoder only",
                decoder=decoder,
            )
        if encoder == "features" and any(value is None for value in (
                feature_locations, feature_channels, feature_vector_dim)):
            raise ValueError(
                "The features encoder needs feature_locations, feature_channels and feature_vector_dim. "
                f"Received: feature_locations={feature_locations!r}, feature_channels={feature_channels!r}, "
                f"feature_vector_dim={feature_vector_dim!r}"
            )
        # Counts are checked before any int(): 8.9 units used to become 8.
        counts = {"vocab_size": vocab_size, "image_size": image_size, "embedding_dim": embedding_dim, "units": units,
                  "max_output_length": max_output_length}
        if attention_units is not None:
            counts["attention_units"] = attention_units
        if encoder == "features":
            counts.update(feature_locations=feature_locations, feature_channels=feature_channels,
                          feature_vector_dim=feature_vector_dim)
        counts = {name: check_count(value, name) for name, value in counts.items()}  # plain ints from here on
        check_cnn_sizes(cnn_filters, vector_dim, convs_per_block)  # before int(): "32" is not (3, 2)
        given = {"image_size": image_size, "cnn_filters": cnn_filters, "vector_dim": vector_dim,
                 "convs_per_block": convs_per_block, "cnn_dropout": cnn_dropout,
                 "feature_locations": feature_locations, "feature_channels": feature_channels,
                 "feature_vector_dim": feature_vector_dim}
        def reason(unread):  # the names not at their defaults
            reasons = []
            if encoder == "features" and unread & set(CNN_DEFAULTS):
                reasons.append("`image_size`, `cnn_filters`, `vector_dim`, `convs_per_block` and `cnn_dropout` "
                               "set the small CNN encoder; the features encoder reads a backbone's features")
            if encoder == "small" and unread & set(FEATURE_DEFAULTS):
                reasons.append("`feature_locations`, `feature_channels` and `feature_vector_dim` apply to the "
                               "features encoder only")
            if encoder == "small" and unread & set(FC_DEFAULTS):
                reasons.append("`vector_dim` and `cnn_dropout` (which acts on the fc7 vector) apply to the plain "
                               "decoders only: the attentional decoder never reads the vector")
            return "; ".join(reasons)

        # Used to be accepted, saved and ignored.
        check_unread_options(given, unread_settings(encoder, decoder), reason, encoder=encoder, decoder=decoder)
        self.vocab_size = counts["vocab_size"]
        self.decoder_kind = decoder
        self.encoder_kind = encoder
        self.image_size = counts["image_size"]
        self.cnn_filters = tuple(int(f) for f in cnn_filters)
        self.vector_dim = int(vector_dim)
        self.convs_per_block = int(convs_per_block)
        self.cnn_dropout = float(cnn_dropout)
        # None with the small encoder
        self.feature_locations = counts.get("feature_locations")
        self.feature_channels = counts.get("feature_channels")
        self.feature_vector_dim = counts.get("feature_vector_dim")
        self.embedding_dim = counts["embedding_dim"]
        self.units = counts["units"]
        self.attention_units = counts.get("attention_units")
        self.deep_output = deep_output
        self.location_coordinates = location_coordinates
        self.start_id, self.stop_id, self.pad_id = check_special_ids(self.vocab_size, start_id, stop_id, pad_id)
        self.max_output_length = counts["max_output_length"]

        if encoder == "small":
            # The attentional decoder never reads fc7, so its encoder has no fc layer.
            self.image_encoder = SmallCNNEncoder(
                self.cnn_filters, vector_dim=0 if decoder == "attention" else self.vector_dim,
                convs_per_block=self.convs_per_block, dropout=self.cnn_dropout, dtype=self.dtype_policy,
                name="image_encoder",
            )
            height, _ = self.image_encoder.feature_grid(self.image_size)
            self.grid = (height, height)
        else:
            self.image_encoder = None
            side = int(round(float(self.feature_locations) ** 0.5))
            self.grid = (side, side) if side * side == self.feature_locations else (1, self.feature_locations)
        if decoder == "attention":
            self.decoder = AttentionGRUDecoder(
                self.vocab_size, self.embedding_dim, self.units, attention_units=self.attention_units,
                deep_output=self.deep_output, dtype=self.dtype_policy, name="decoder",
            )
            self.bridge = keras.layers.Dense(self.units, activation="tanh", dtype=self.dtype_policy, name="W_init")
        else:
            self.decoder = PlainGRUDecoder(
                self.vocab_size, self.embedding_dim, self.units, option=1 if decoder == "option1" else 2,
                dtype=self.dtype_policy, name="decoder",
            )
            # Option 1: the lecture's d x 4096 projection of fc7 to the state size.
            self.bridge = (
                keras.layers.Dense(self.units, use_bias=False, dtype=self.dtype_policy, name="W_proj")
                if decoder == "option1" else None
            )
        self.coordinates = (
            LocationCoordinates(self.grid, dtype=self.dtype_policy, name="location_coordinates")
            if self.location_coordinates else None
        )
        self._decode_functions = {}
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    # -- inputs -----------------------------------------------------------------

    @property
    def image_keys(self):
        return ("image",) if self.encoder_kind == "small" else ("locations", "vector")

    def _check_inputs(self, inputs, need_target=True):
        if not isinstance(inputs, dict):
            raise ValueError(
                f"ImageCaptioner expects a dict with keys {self.image_keys + ('target_in',)}. "
                f"Received: {type(inputs).__name__}"
            )
        keys = self.image_keys + (("target_in",) if need_target else ())
        missing = [k for k in keys if k not in inputs]
        if missing:
            raise ValueError(
                f"ImageCaptioner ({self.encoder_kind} encoder) needs keys {keys}. "
                f"Received: keys={sorted(inputs)}"
            )
        check_same_batch(**{key: inputs[key] for key in keys if hasattr(inputs[key], "shape")})

    # -- forward passes ---------------------------------------------------------

    def encode(self, inputs, training=None):
        """Returns `(locations (batch, L, C), vector (batch, D))`."""
        self._check_inputs(inputs, need_target=False)
        if self.encoder_kind == "small":
            images = inputs["image"]
            if len(images.shape) != 4 or tuple(images.shape[1:]) != (self.image_size, self.image_size, 3):
                raise ValueError(
                    f"`image` must have shape (batch, {self.image_size}, {self.image_size}, 3). "
                    f"Received: image.shape={tuple(images.shape)}"
                )
            return self.image_encoder(images, training=training)
        locations = ops.cast(inputs["locations"], self.compute_dtype)
        vector = ops.cast(inputs["vector"], self.compute_dtype)
        expected = (self.feature_locations, self.feature_channels)
        if len(locations.shape) != 3 or tuple(locations.shape[1:]) != expected:
            raise ValueError(
                f"`locations` must have shape (batch, {expected[0]}, {expected[1]}). "
                f"Received: locations.shape={tuple(locations.shape)}"
            )
        if len(vector.shape) != 2 or vector.shape[1] != self.feature_vector_dim:
            raise ValueError(
                f"`vector` must have shape (batch, {self.feature_vector_dim}). Received: vector.shape={tuple(vector.shape)}"
            )
        return locations, vector

    def decoder_inputs(self, locations, vector):
        """`(encoder_outputs, initial_state)` for the chosen decoder."""
        if self.decoder_kind == "attention":
            initial_state = self.bridge(ops.mean(locations, axis=1))  # s_0: (batch, units)
            if self.coordinates is not None:
                locations = self.coordinates(locations)  # [a_j; y_j; x_j]: (batch, L, C + 2)
            return locations, initial_state
        # The plain decoders read no locations: fc7(I) is the image's only
        # "location" (`PlainGRUDecoder` sizes option 2's input from the last
        # axis of `encoder_outputs`, so that axis must be the vector's).
        single_location = vector[:, None, :]  # (batch, 1, D)
        if self.decoder_kind == "option1":
            return single_location, self.bridge(vector)  # s_0 = W_proj fc7(I): (batch, units)
        return single_location, vector  # option 2: fc7(I) joined to every input

    def forward(self, inputs, training=None):
        """Teacher-forced pass; returns `(logits, alignments)`."""
        self._check_inputs(inputs)
        locations, vector = self.encode(inputs, training=training)
        encoder_outputs, initial_state = self.decoder_inputs(locations, vector)
        return self.mark_built(self.decoder(inputs["target_in"], encoder_outputs, initial_state, training=training))

    def call(self, inputs, training=None):
        logits, _ = self.forward(inputs, training=training)
        return logits  # (batch, tgt_len, vocab)

    # -- decoding ---------------------------------------------------------------

    def _prepare(self, inputs):
        locations, vector = self.encode(inputs, training=False)
        encoder_outputs, initial_state = self.decoder_inputs(locations, vector)
        memory = self.decoder.prepare_memory(encoder_outputs, initial_state)
        return memory, self.decoder.start_state(initial_state)

    def _greedy(self, inputs, max_length):
        memory, start_state = self._prepare(inputs)
        tokens, alignments, scores = greedy_decode(
            self.decoder, memory, start_state, self.start_id, self.stop_id, max_length, pad_id=self.pad_id
        )
        return {"tokens": tokens, "alignments": alignments, "scores": scores}

    def _beam(self, inputs, max_length, beam_width, length_penalty):
        memory, start_state = self._prepare(inputs)
        return beam_search(
            self.decoder, memory, start_state, self.start_id, self.stop_id, max_length, beam_width,
            length_penalty=length_penalty, pad_id=self.pad_id,
        )

    def _input_signature(self):
        """`compile_once`'s signature of the model's inputs, any batch size."""
        if self.encoder_kind == "small":
            return {"image": ((None, self.image_size, self.image_size, 3), "float32")}
        return {
            "locations": ((None, self.feature_locations, self.feature_channels), "float32"),
            "vector": ((None, self.feature_vector_dim), "float32"),
        }

    def decode_function(self, max_length, beam_width=1, length_penalty=1.0):
        """A compiled decoder (greedy when `beam_width == 1`) for any batch size."""
        key = (int(max_length), int(beam_width), float(length_penalty))
        if key not in self._decode_functions:
            def decode(inputs):
                if key[1] == 1:
                    return self._greedy(inputs, key[0])
                return self._beam(inputs, *key)

            self._decode_functions[key] = compile_once(decode, [self._input_signature()])
        return self._decode_functions[key]

    def generate(self, inputs, max_length=None, beam_width=1, length_penalty=1.0, batch_size=256):
        """Captions a batch of images (token ids) with their attention weights.

        Args:
            inputs: dict of NumPy arrays, `{"image"}` or `{"locations", "vector"}`.
            max_length: output length limit (`<stop>` included).
            beam_width: 1 for greedy decoding, k > 1 for beam search.
            length_penalty: see `course_lib.decoding.beam`.
            batch_size: images decoded together.

        Returns:
            A dict of NumPy arrays: `tokens (n, max_length)`, `alignments
            (n, max_length, L)` (the weights over locations behind each
            generated word; for options 1 and 2, zeros of width 1) and `scores (n,)`. With
            beam search also `beam_tokens (n, k, max_length)` and
            `beam_scores (n, k)`, best first.
        """
        self._check_inputs(inputs, need_target=False)
        if not self.built:
            self.build()
        arrays = {key: np.asarray(inputs[key], "float32") for key in self.image_keys}
        count = len(arrays[self.image_keys[0]])
        if count == 0:
            raise ValueError("Nothing to caption. Received: 0 images")
        for key, value in arrays.items():
            if not np.all(np.isfinite(value)):
                raise ValueError(f"`{key}` holds NaN or infinite values. Received: {int(np.sum(~np.isfinite(value)))} of them")
        check_count(batch_size, "batch_size")
        max_length = self.max_output_length if max_length is None else max_length
        # With max_length: a length penalty that overflows float32 is refused here, not while tracing.
        check_beam_options(beam_width, length_penalty, self.vocab_size, max_length=max_length)
        check_greedy_length_penalty(beam_width, length_penalty)
        function = self.decode_function(max_length, beam_width, length_penalty)
        parts = []
        for start in range(0, count, batch_size):
            chunk = {key: value[start : start + batch_size] for key, value in arrays.items()}
            parts.append({name: np.asarray(value) for name, value in function(chunk).items()})
        merged = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
        if beam_width == 1:
            return merged
        return {
            "tokens": merged["tokens"][:, 0],
            "alignments": merged["alignments"][:, 0],
            "scores": merged["scores"][:, 0],
            "beam_tokens": merged["tokens"],
            "beam_scores": merged["scores"],
        }

    # -- Keras plumbing -----------------------------------------------------------

    def token_id_sizes(self):
        return {"target_in": self.vocab_size, "targets": self.vocab_size}

    def build_sublayers(self):
        """Builds the image encoder, the bridge and the decoder, for any batch size and caption length."""
        if self.image_encoder is not None:
            images_shape = (None, self.image_size, self.image_size, 3)
            self.image_encoder.build(images_shape)
            locations_shape, vector_shape = self.image_encoder.compute_output_shape(images_shape)
        else:
            locations_shape = (None, self.feature_locations, self.feature_channels)
            vector_shape = (None, self.feature_vector_dim)
        tokens_shape = (None, None)  # (batch, caption length)
        if self.decoder_kind == "attention":
            self.bridge.build((None, locations_shape[-1]))  # reads the mean location
            if self.coordinates is not None:
                self.coordinates.build(locations_shape)
                locations_shape = self.coordinates.compute_output_shape(locations_shape)  # (None, L, C + 2)
            self.decoder.build(tokens_shape, locations_shape)
        else:
            single_location_shape = (None, 1, vector_shape[-1])  # fc7(I) as the only "location"
            if self.bridge is not None:  # option 1: s_0 = W_proj fc7(I)
                self.bridge.build(vector_shape)
            initial_state_shape = (None, self.units) if self.bridge is not None else vector_shape
            self.decoder.build(tokens_shape, single_location_shape, initial_state_shape)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if config.get("decoder", "attention") != "attention":
            # Plain captioners saved before these were refused with them (the captioning task saved
            # deep_output=True); their decoders never read either.
            config = {**config, "deep_output": False, "attention_units": None, "location_coordinates": False}
        # `get_config` saves every setting, the unread ones too (a features-encoder captioner holds the CNN's
        # sizes); ones saved before unread values were refused go back to the defaults the model ran as.
        unread = unread_settings(config.get("encoder", "small"), config.get("decoder", "attention"))
        config = {**config, **{name: default for name, default in unread.items() if name in config}}
        return super().from_config(config, custom_objects=custom_objects)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "decoder": self.decoder_kind,
            "encoder": self.encoder_kind,
            "image_size": self.image_size,
            "cnn_filters": list(self.cnn_filters),
            "vector_dim": self.vector_dim,
            "convs_per_block": self.convs_per_block,
            "cnn_dropout": self.cnn_dropout,
            "feature_locations": self.feature_locations,
            "feature_channels": self.feature_channels,
            "feature_vector_dim": self.feature_vector_dim,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "attention_units": self.attention_units,
            "deep_output": self.deep_output,
            "location_coordinates": self.location_coordinates,
            "start_id": self.start_id,
            "stop_id": self.stop_id,
            "pad_id": self.pad_id,
            "max_output_length": self.max_output_length,
        }
