"""verl release/retain closure experiment runner."""
