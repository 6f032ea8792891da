"""Training: a generator of events (engine.training.loop.train) shared by the CLI and the GUI."""
