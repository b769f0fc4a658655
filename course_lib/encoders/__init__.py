"""Encoders: token sequences (and, later, images and documents) to vectors."""

from course_lib.encoders.gru_encoder import GRUEncoder

__all__ = ["GRUEncoder"]
