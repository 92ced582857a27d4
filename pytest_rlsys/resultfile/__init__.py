"""The result-file path: schema registry, loading, the closure checks and grading."""
