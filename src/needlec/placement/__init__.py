"""Token-exact placement of needles in a haystack window."""
