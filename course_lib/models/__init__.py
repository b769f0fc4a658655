"""Whole models built from encoders and decoders."""

from course_lib.models.seq2seq import Seq2Seq

__all__ = ["Seq2Seq"]
