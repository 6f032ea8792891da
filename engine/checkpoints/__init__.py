"""Run folders on disk: their files, saving all or nothing, reading back, averaging saves, the shipped ones."""
