"""Language data: name pools, and (as families arrive) sentence rules, joiners and vocabularies per language."""
