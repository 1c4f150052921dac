"""Scoring: metrics that judge a runner's responses, and the aggregates and reports built from them.

Importing the package registers the built-in metrics in `needlec.registry.METRICS`.
"""

from needlec.scoring import metrics as metrics
