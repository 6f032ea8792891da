"""Talk mode: a deck of steps (scenes with a title a speaker reads out) shown full screen, computed once
and stepped with the keyboard or a clicker; decks are plain JSON (deck.py), shown by window.py, edited
from the main window with editor.py."""
