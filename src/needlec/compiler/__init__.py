"""Spec language, plan resolution, tokenizers, haystacks, placement, items and checks."""
