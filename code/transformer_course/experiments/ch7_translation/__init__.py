"""The experiments of Chapter 7, translation: English number words into German (and French)."""
