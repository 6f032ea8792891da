"""What a model and a run are made of: each family's typed settings, checking a config read from a file, a run's spec."""
