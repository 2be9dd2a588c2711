# The corpus: the optional Bible builder and the split tables every later stage reads.


rule build_bible_table:
    """Rebuild the verse table from the Bible sources (Debian SWORD modules, pythonbible).

    Not part of the default run: the frozen output ships as resources/bible/bible.parquet.
    """
    output:
        table="results/bible/bible.parquet",
    log:
        "logs/bible/build_bible_table.log",
    benchmark:
        "benchmarks/bible/build_bible_table.tsv"
    params:
        shift_flags="resources/bible/shift_flags.tsv",
        seed=config["seed"],
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/build_bible_table.py"


rule prepare_corpus:
    """Validate the corpus and write one split's table: the train bitext or the tune, test or
    paratune set. Each split is its own job, rerun when what the split is made from changes
    (its digest is a param; the corpus files are ancient, so a touch reruns nothing): fixing
    a tune reference rebuilds the tune table and what reads it, not the grammar or the LMs.
    Every job checks the whole corpus, the overlaps between the sets included."""
    input:
        ancient_corpus_files,
    output:
        table=CORPUS_TABLE,
    log:
        "logs/{experiment}/prepare_corpus/{split}.log",
    params:
        corpus=corpus_params(),
        max_line_chars=config["validation"]["max_line_chars"],
        seed=config["seed"],
        overlap=config["validation"]["overlap"],
        digest=split_digest,
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/prepare_corpus.py"


rule unused_training_segments:
    """With corpus.train_segments: the training segments its seeded sample leaves out of the
    bitext, whose source side stays monolingual text of the OOV paraphrases. Rerun, as the
    training split, when the training segments change (prepare_corpus)."""
    input:
        ancient_corpus_files,
    output:
        table=CORPUS_TABLE.format(experiment="{experiment}", split=UNUSED_TRAINING),
    log:
        "logs/{experiment}/unused_training_segments.log",
    params:
        corpus=corpus_params(),
        max_line_chars=config["validation"]["max_line_chars"],
        seed=config["seed"],
        digest=split_digest,
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/unused_training_segments.py"
