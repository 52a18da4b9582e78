"""Ways to show results: terminal tables (and, with extras, an HTML report)."""
