"""Needle kinds: generators that turn a config and an item RNG into needles, questions and answers."""
