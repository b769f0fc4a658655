"""Data: one module per generated set and per real-data format."""
