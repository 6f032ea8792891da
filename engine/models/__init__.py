"""One file per model family. Each trains through a generator of events and loads from a run folder."""
