"""NeedleBench needle data written for this project: fictional retrieval facts and multi-hop reasoning chains.

The JSON files next to this module hold, per language (`en`, `zh`), the retrieval records used by the single- and
multi-needle retrieval tasks (S-RT, M-RT) and the reasoning chains used by the multi-needle reasoning task (M-RS).
`manifest.json` pins every data file by sha256; `files.read_verified` refuses a file whose digest differs.
Typed access lives in `needlec.kinds.needlebench.data`.
"""
