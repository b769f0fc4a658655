"""Assignments and grading: generating student notebooks, running and scoring submissions."""
