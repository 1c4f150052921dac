"""Typed dataset rows and manifests: the data contract between compile, scoring and publishing.

Low in the layering (it imports only `errors` and `util`), so every stage can read it.
"""
