"""Outputs of a grading run: terminal text, score JSON and platform files.

``registry.OUTPUTS`` is the table of file outputs (name -> help, consumer, renderer);
``reports`` holds what a learner reads and the ``render``/``write_atomic`` entry points.
"""
