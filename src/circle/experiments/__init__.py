"""The experiments over tuning runs: reference conditions and runs (thesis ch. 4), test-set
evaluation and significance, held-out tuning sets, per-iteration scores, length matching, the
quality of extra references and the dose-response."""
