"""Tuning of log-linear feature weights: minimum error rate training (Och 2003; thesis §3.2.3)."""
