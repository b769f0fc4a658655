"""Decoders: the attentional GRU decoder and the plain one (options 1 and 2)."""

from course_lib.decoders.attention_gru import AttentionGRUDecoder
from course_lib.decoders.plain_gru import PlainGRUDecoder

__all__ = ["AttentionGRUDecoder", "PlainGRUDecoder"]
