"""The corpora: the shipped Bible and its foreign Bibles (versification, cleaning), a user's own
files, the evaluation sets, tokenisation, and the pivot bitexts of the paraphrase grammar."""
