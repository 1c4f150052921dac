"""Scoring: metrics that judge a runner's responses, and the aggregates built from them."""
