"""Outputs of a grading run: terminal text, score JSON and platform files.

``registry.MODULES`` is the table of file outputs (name -> renderer module);
``registry.render`` is the entry (an output's text, by name); ``terminal`` is what a
learner reads, ``batchline`` the batch CSV's message, ``files.write_atomic`` the file edge.
"""
