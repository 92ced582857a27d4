"""An infinite loop while the module is imported."""

while True:
    pass
