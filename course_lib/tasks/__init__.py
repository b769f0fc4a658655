"""Experiments: each module wires data, model, training and metrics.

Notebooks and the CLI both call these. A task module that offers command-line
verbs defines `register_cli(commands)`; `course_lib.cli` finds it by itself.
"""
