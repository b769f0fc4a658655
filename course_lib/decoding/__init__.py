"""Turning a trained decoder into output sequences."""

from course_lib.decoding.greedy import greedy_decode
from course_lib.decoding.sequences import strip_special_tokens

__all__ = ["greedy_decode", "strip_special_tokens"]
