"""The documentation site generator: benchmark pages, catalogue and references from specs and manifests.

`needlec.site.build.build_site` is the entry point; `needlec site build` calls it.
"""
