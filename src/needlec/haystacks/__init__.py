"""Haystacks: sources of text, filters that clean it, builders that assemble it, and the token index."""
