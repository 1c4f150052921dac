"""What a compiled dataset is made of: the item and manifest formats, and their version.

This package sits low in the layers (above `errors`, `registry` and `util`): the compiler that
writes items, the exporters that describe them and the scorer that reads them all import it,
and it imports none of them.
"""

ITEM_SCHEMA_VERSION = 1
"""Version of the item format (the fields of a compiled JSONL row); bumped on any change to it."""

__all__ = ["ITEM_SCHEMA_VERSION"]
