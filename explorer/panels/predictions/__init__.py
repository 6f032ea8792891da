"""The predictions panel and its views."""
