"""Pure generators for the RULER task family: key-value needles, variable tracking, word extraction, QA, passkey.

Every generator takes a `random.Random` owned by the caller (one per item, seeded from the item
seed), never touches global random state, and returns plain frozen data that records everything
the answer depends on, so an independent check can recompute the answer from the rendered text.
Token counting and placement belong to the compile pipeline; these modules only draw and render.
"""
