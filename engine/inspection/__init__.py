"""Read-only queries over loaded models: corpus indexes of contextual vectors."""
