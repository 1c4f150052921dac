"""Writers of compiled datasets: canonical JSONL, the Hugging Face folder with its card, the manifest."""
