"""The sentential paraphraser (thesis ch. 3 and 5): decoding with a paraphrase grammar, its
reference-space distances, the targeting grid search (§5.2.3) and targeted references inside the
tuning loop (§5.3)."""
