"""Attention layers (floor 1: imports only Keras)."""

from course_lib.layers.attention_pooling import AttentionPooling
from course_lib.layers.bahdanau_attention import BahdanauAttention
from course_lib.layers.location_coordinates import LocationCoordinates
from course_lib.layers.masking import masked_softmax

__all__ = ["AttentionPooling", "BahdanauAttention", "LocationCoordinates", "masked_softmax"]
