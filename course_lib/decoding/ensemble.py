"""Decoding with an ensemble: several trained models vote at every step.

Each member encodes the source itself and keeps its own decoder state; at
step t the ensemble's next-token distribution is the mean of the members'
distributions,

    P(y_t | y_<t, x) = (1/M) sum_m P_m(y_t | y_<t, x),

so beam search (or greedy decoding, its width-1 case) over the ensemble picks
the tokens the members agree on. The attention weights reported are the mean
of the attentional members' weights (a plain member's zeros would make the
rows sum to less than 1); all zeros when no member attends. Models trained
from different random seeds make different mistakes, which is why this helps
even when every member has the same architecture.
"""

import math

from keras import ops

from course_lib.layers.masking import check_mask_dtype


class EnsembleDecoder:
    """The decoder protocol (`prepare_memory`, `start_state`, `step`) over several decoders.

    The memory is `{"mask": ..., "members": (memory_1, ..., memory_M)}` and the
    state a tuple with one state per member. `step` returns the log of the
    mean probability as its logits (`log_softmax` leaves it unchanged).

    Args:
        decoders: the members' decoders, in the order of the encoder outputs
            and initial states passed to `prepare_memory`.
    """

    def __init__(self, decoders):
        self.decoders = tuple(decoders)

    def prepare_memory(self, encoder_outputs, initial_state, source_mask):
        members = tuple(
            decoder.prepare_memory(outputs, state, source_mask)
            for decoder, outputs, state in zip(self.decoders, encoder_outputs, initial_state)
        )
        check_mask_dtype(source_mask)  # the members' own checks are skipped by plain decoders
        return {"mask": ops.cast(source_mask, "bool"), "members": members}  # mask: (batch, src_len)

    def start_state(self, initial_state):
        return tuple(decoder.start_state(state) for decoder, state in zip(self.decoders, initial_state))

    def step(self, previous_tokens, state, memory, training=None):
        log_probs, states, weights, plain_weights = [], [], [], []
        for decoder, member_state, member_memory in zip(self.decoders, state, memory["members"]):
            logits, new_state, member_weights = decoder.step(previous_tokens, member_state, member_memory)
            log_probs.append(ops.log_softmax(logits, axis=-1))  # (batch, vocab)
            states.append(new_state)
            attends = getattr(decoder, "has_attention", True)
            (weights if attends else plain_weights).append(member_weights)  # (batch, src_len)
        mean_log_prob = ops.logsumexp(ops.stack(log_probs), axis=0) - math.log(len(log_probs))  # (batch, vocab)
        mean_weights = ops.mean(ops.stack(weights or plain_weights), axis=0)  # (batch, src_len); zeros if none attends
        return mean_log_prob, tuple(states), mean_weights


# What `Ensemble` reads from each member.
_MODEL_ATTRIBUTES = ("source_vocab_size", "target_vocab_size", "start_id", "stop_id", "pad_id", "decoder",
                     "max_output_length", "encode", "build", "weights")


class Ensemble:
    """Several `Seq2Seq` models with the same vocabularies, decoded as one.

    Args:
        models: trained models sharing source and target vocabularies and the
            special token ids (`start_id`, `stop_id`, `pad_id`).

    `generate(source, max_length=None, beam_width=1, length_penalty=1.0)`
    returns what `Seq2Seq.generate` returns; width 1 is greedy decoding of
    the mean distribution, with `tokens`, `alignments` and `scores` (the
    log-probability of each output under it).
    """

    def __init__(self, models):
        models = list(models)
        if not models:
            raise ValueError("An ensemble needs at least one model. Received: models=[]")
        for index, model in enumerate(models):
            missing = [name for name in _MODEL_ATTRIBUTES if not hasattr(model, name)]
            if missing:
                raise ValueError(
                    "Ensemble members must be Seq2Seq-like models. "
                    f"Received: model {index} of type {type(model).__name__}, which lacks {missing}"
                )
        first = models[0]
        for index, model in enumerate(models[1:], start=1):
            for name in ("source_vocab_size", "target_vocab_size", "start_id", "stop_id", "pad_id"):
                if getattr(model, name) != getattr(first, name):
                    raise ValueError(
                        f"Ensemble members must share vocabularies and special ids. Received: model {index} "
                        f"has {name}={getattr(model, name)}, model 0 has {getattr(first, name)}"
                    )
        self.models = models
        self.decoder = EnsembleDecoder(model.decoder for model in models)
        self.start_id, self.stop_id, self.pad_id = first.start_id, first.stop_id, first.pad_id
        self.source_vocab_size, self.target_vocab_size = first.source_vocab_size, first.target_vocab_size
        self.max_output_length = max(model.max_output_length for model in models)

    @property
    def weights(self):
        return [weight for model in self.models for weight in model.weights]

    def encode(self, source, training=False):
        """`(outputs per member, initial states per member, source_mask)`."""
        encoded = [model.encode(source, training=training) for model in self.models]
        return tuple(e[0] for e in encoded), tuple(e[1] for e in encoded), encoded[0][2]

    def generate(self, source, max_length=None, beam_width=1, length_penalty=1.0):
        from course_lib.decoding.beam import beam_search_model, check_greedy_length_penalty

        check_greedy_length_penalty(beam_width, length_penalty)  # width 1 returns the plain log-probability
        max_length = self.max_output_length if max_length is None else max_length
        for model in self.models:
            model.build()
        # `beam_search_model` makes the checks `Seq2Seq.generate` makes (sources, ids, options) first.
        result = beam_search_model(self, source, max_length, beam_width, length_penalty)
        if beam_width > 1:
            return result
        # Width 1 is greedy decoding: its score is the log-probability, as `Seq2Seq.generate` gives.
        return {"tokens": result["tokens"], "alignments": result["alignments"], "scores": result["log_probs"]}
