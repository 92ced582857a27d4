"""Outputs of a grading run: terminal text, score JSON and platform files."""
