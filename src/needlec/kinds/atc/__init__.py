"""Ancestral Trace Challenge (ATC): kinship graphs whose facts are the needles, and their rendering.

`graph` draws a checked family graph and a question with exactly one correct answer; `render`
turns it into sentences, questions, multiple-choice rotations and few-shot examples through a
language pack from `needlec.languages.kinship`.
"""
