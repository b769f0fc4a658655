"""Attention layers (floor 1: imports only Keras)."""

from course_lib.layers.bahdanau_attention import BahdanauAttention
from course_lib.layers.masking import masked_softmax

__all__ = ["BahdanauAttention", "masked_softmax"]
