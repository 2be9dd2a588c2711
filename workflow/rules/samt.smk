# Ganitkevitch & Callison-Burch (draft): syntactically labelled (SAMT) grammars pivoted into
# labelled paraphrase grammars, from the MT system's training bitext (circle.grammar.samt,
# circle.grammar.extract, circle.grammar.pivot). Not in the default target.


rule parse_training:
    """The English side of the training bitext parsed over its own tokens (the parser stage,
    circle.grammar.parse): the constituents SAMT labels the target spans with."""
    input:
        raw=CORPUS_TABLE.format(experiment="{experiment}", split="train"),
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
    output:
        parses=TRAINING_PARSES,
    log:
        "logs/{experiment}/parse_training.log",
    benchmark:
        "benchmarks/{experiment}/parse_training.tsv"
    params:
        options=config["preprocess"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/parse_training.py"


rule extract_labelled_grammar:
    """The bilingual grammar with the SAMT label of each target span as left-hand side and on
    each nonterminal (Zollmann & Venugopal 2006): Hiero's phrase pairs and eq. 3.3 counts, the
    relative frequencies conditioned on the label; counted by the job's threads, merged out of
    core within its mem_mb."""
    input:
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
        alignment=alignment_source,
        parses=TRAINING_PARSES,
    output:
        grammar=LABELLED_BILINGUAL_GRAMMAR,
    log:
        "logs/{experiment}/extract_labelled_grammar.log",
    benchmark:
        "benchmarks/{experiment}/extract_labelled_grammar.tsv"
    params:
        options=config["grammar"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/extract_labelled_grammar.py"


rule pivot_labelled_grammar:
    """The labelled paraphrase grammar (draft §4): rules paired on (label, foreign side), the
    draft's three feature groups and φ_ident, pruned by samt's thresholds and top n; only the
    phrases of paraphrase.phrases_from's references, as the Hiero pivot."""
    input:
        grammar=LABELLED_BILINGUAL_GRAMMAR,
        evalsets=expand(
            EVALSET_TABLE, evalset=config["paraphrase"]["phrases_from"], allow_missing=True
        ),
    output:
        grammar=LABELLED_PARAPHRASE_GRAMMAR_FILE,
        self_paraphrase=LABELLED_SELF_PARAPHRASE,
    log:
        "logs/{experiment}/pivot_labelled_grammar.log",
    benchmark:
        "benchmarks/{experiment}/pivot_labelled_grammar.tsv"
    params:
        options=labelled_pivot_options(),
        phrases_from=config["paraphrase"]["phrases_from"],
        span_limit=config["decoder"]["span_limit"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/pivot_labelled_grammar.py"


rule collapse_labelled_grammar:
    """The labelled paraphrase grammar collapsed to Hiero's X after pivoting, the labels
    marginalised out (circle.grammar.collapse), with its residuals (eq. 5.2): what the bias
    reads with samt.paraphraser."""
    input:
        grammar=LABELLED_PARAPHRASE_GRAMMAR_FILE,
        self_paraphrase=LABELLED_SELF_PARAPHRASE,
        bilingual=LABELLED_BILINGUAL_GRAMMAR,
    output:
        grammar=COLLAPSED_PARAPHRASE_GRAMMAR,
        self_paraphrase=COLLAPSED_SELF_PARAPHRASE,
    log:
        "logs/{experiment}/collapse_labelled_grammar.log",
    benchmark:
        "benchmarks/{experiment}/collapse_labelled_grammar.tsv"
    params:
        lexical_feature=config["paraphrase"]["lexical_feature"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/collapse_labelled_grammar.py"


rule report_samt:
    """The labelled grammars' page: label set, sizes against Hiero's, and example structural
    paraphrase rules with their counts and features (the draft's table of rules)."""
    input:
        hiero=BILINGUAL_GRAMMAR,
        labelled=LABELLED_BILINGUAL_GRAMMAR,
        paraphrases=LABELLED_PARAPHRASE_GRAMMAR_FILE,
    output:
        markdown=report_file("samt.md"),
        html=report(
            report_file("samt.html"),
            caption="../report/samt.rst",
            category="Labelled paraphrase grammars",
        ),
    log:
        "logs/{experiment}/report_samt.log",
    params:
        examples=config["samt"]["examples"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/report_samt.py"


rule samt_grammars:
    """Named target: the training parses, the labelled bilingual and paraphrase grammars, the
    paraphrase grammar collapsed to X, and their page (Ganitkevitch & Callison-Burch, draft)."""
    input:
        EFFECTIVE_CONFIG,
        report_file("samt.md", EXPERIMENT),
        COLLAPSED_PARAPHRASE_GRAMMAR.format(experiment=EXPERIMENT),
