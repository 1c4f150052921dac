"""The compile stages: plan, item building, contract checks and the streaming pipeline."""
