"""The grading path: the grader, the isolation boundary (parent and child), the
battery, comparison, rubric and scoring."""
