# Hiero grammar extraction, filtering to the evaluation sets, pivoting into paraphrase grammars
# and the self-paraphrase bias (thesis ch. 3, §5.2.2). Logic in circle.grammar.


rule split_for_counting:
    """The aligned training bitext checked, its lexical table (Koehn et al. 2003), and its parts,
    one per counting job (scatter)."""
    input:
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
        alignment=alignment_source,
    output:
        lexical=LEXICAL_TABLE,
        parts=temp(
            expand(
                "results/{{experiment}}/grammar/extraction/part{part}.parquet",
                part=range(config["grammar"]["count_jobs"]),
            )
        ),
    log:
        "logs/{experiment}/split_for_counting.log",
    benchmark:
        "benchmarks/{experiment}/split_for_counting.tsv"
    params:
        batch_size=config["grammar"]["batch_size"],
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/split_for_counting.py"


rule count_rules:
    """The Hiero rules of one part of the bitext and their eq. 3.3 fractional counts, batch by
    batch (memory follows grammar.batch_size, not the corpus)."""
    input:
        part="results/{experiment}/grammar/extraction/part{part}.parquet",
        lexical=LEXICAL_TABLE,
    output:
        counts=temp("results/{experiment}/grammar/extraction/counts{part}.parquet"),
    log:
        "logs/{experiment}/count_rules/part{part}.log",
    benchmark:
        "benchmarks/{experiment}/count_rules/part{part}.tsv"
    params:
        options=config["grammar"],
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/count_rules.py"


rule extract_grammar:
    """The bilingual Hiero grammar: the counting jobs' counts added up and turned into features
    (eq. 3.3) out of core, within the job's mem_mb (gather)."""
    input:
        counts=expand(
            "results/{{experiment}}/grammar/extraction/counts{part}.parquet",
            part=range(config["grammar"]["count_jobs"]),
        ),
    output:
        grammar=BILINGUAL_GRAMMAR,
    log:
        "logs/{experiment}/extract_grammar.log",
    benchmark:
        "benchmarks/{experiment}/extract_grammar.tsv"
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/extract_grammar.py"


rule filter_grammar:
    """The bilingual rules whose source side matches a span of an evaluation set's input."""
    input:
        grammar=BILINGUAL_GRAMMAR,
        evalset=EVALSET_TABLE,
    output:
        grammar=FILTERED_GRAMMAR,
    log:
        "logs/{experiment}/filter_grammar/{evalset}.log",
    benchmark:
        "benchmarks/{experiment}/filter_grammar/{evalset}.tsv"
    params:
        span_limit=config["decoder"]["span_limit"],
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/filter_grammar.py"


rule oov_paraphrases:
    """Distributional paraphrases of an evaluation set's OOV phrases (Marton, Callison-Burch &
    Resnik 2009 §3-4) from the source side of every split, and of the training segments
    corpus.train_segments leaves out of the bitext, as monolingual text; with oov_paraphrase's
    search settings or ({oov_variant}) a variant's."""
    input:
        grammar=FILTERED_GRAMMAR,
        evalset=EVALSET_TABLE,
        monolingual=oov_monolingual,
    output:
        paraphrases=OOV_PARAPHRASE_TABLE,
    log:
        "logs/{experiment}/oov_paraphrases{oov_variant}/{evalset}.log",
    benchmark:
        "benchmarks/{experiment}/oov_paraphrases{oov_variant}/{evalset}.tsv"
    params:
        settings=oov_paraphrase_settings,
    wildcard_constraints:
        experiment=MT_SYSTEM,
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/oov_paraphrases.py"


rule augment_grammar:
    """An evaluation set's filtered grammar with the rules its OOV phrases borrow from their
    paraphrases' phrase rules, and the paraphrase feature (Marton et al. 2009 §5); the MT system
    decodes and tunes with it under oov_paraphrase.translate."""
    input:
        grammar=FILTERED_GRAMMAR,
        bilingual=BILINGUAL_GRAMMAR,
        paraphrases=OOV_PARAPHRASE_TABLE,
    output:
        grammar=OOV_PARAPHRASED_GRAMMAR,
    log:
        "logs/{experiment}/augment_grammar{oov_variant}/{evalset}.log",
    benchmark:
        "benchmarks/{experiment}/augment_grammar{oov_variant}/{evalset}.tsv"
    params:
        feature_split=oov_feature_split,
    wildcard_constraints:
        experiment=MT_SYSTEM,
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/augment_grammar.py"


rule pivot_bitext:
    """A pivot bitext of paraphrase.pivots (circle.corpus.pivots): the Bible table's training
    verses of one (foreign, English) column pair, the foreign text from the Bible table or the
    foreign Bibles' table beside it, tokenised as the MT bitext is."""
    input:
        table=lambda wildcards: config["corpus"]["bible"]["table"],
        foreign=config["paraphrase"]["foreign_bibles"],
    output:
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
    log:
        "logs/{experiment}/pivot_bitext.log",
    params:
        source=lambda wildcards: PIVOT_PAIRS[wildcards.experiment].source,
        target=lambda wildcards: PIVOT_PAIRS[wildcards.experiment].target,
        options=config["preprocess"],
    wildcard_constraints:
        experiment=one_of(PIVOT_PAIR_SYSTEMS),
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/pivot_bitext.py"


rule pivot_language:
    """A pivot language's training bitext and alignment: its pivot bitexts one after the other
    (the training bitext with the experiment's alignment, the others with their own), from
    which its bilingual grammar is extracted by the rules above."""
    input:
        unpack(pivot_language_inputs),
    output:
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
        alignment=ALIGNMENT_LINKS,
    log:
        "logs/{experiment}/pivot_language.log",
    wildcard_constraints:
        experiment=one_of(PIVOT_LANGUAGE_SYSTEMS),
    resources:
        runtime=runtime_minutes,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/pivot_language.py"


rule prepare_pivot:
    """Pivoting, step 1: the pivots, the per-phrase residuals p(e1|e1) (eq. 5.2) and what the
    pairing jobs read, the phrases to paraphrase dealt to paraphrase.pivot_jobs jobs; from the
    MT grammar, or from one grammar per pivot language (paraphrase.pivots)."""
    input:
        grammar=pivot_grammars,
        evalsets=expand(
            EVALSET_TABLE, evalset=config["paraphrase"]["phrases_from"], allow_missing=True
        ),
    output:
        rules=temp("results/{experiment}/paraphrase/pivoting/rules.parquet"),
        sources=temp("results/{experiment}/paraphrase/pivoting/sources.parquet"),
        lookup=temp("results/{experiment}/paraphrase/pivoting/lookup.parquet"),
        self_paraphrase=PIVOT_SELF_PARAPHRASE,
    log:
        "logs/{experiment}/prepare_pivot.log",
    benchmark:
        "benchmarks/{experiment}/prepare_pivot.tsv"
    params:
        options=pivot_options(),
        span_limit=config["decoder"]["span_limit"],
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/prepare_pivot.py"


rule pivot_part:
    """Pivoting, step 2 (scatter): one job's part of the unbiased paraphrase grammar (eq.
    3.4-3.13), partition by partition of its phrases e1; the parts together are the grammar."""
    input:
        rules="results/{experiment}/paraphrase/pivoting/rules.parquet",
        sources="results/{experiment}/paraphrase/pivoting/sources.parquet",
        lookup="results/{experiment}/paraphrase/pivoting/lookup.parquet",
        self_paraphrase=PIVOT_SELF_PARAPHRASE,
    output:
        part=PIVOTED_PART,
    log:
        "logs/{experiment}/pivot_part/part{job}.log",
    benchmark:
        "benchmarks/{experiment}/pivot_part/part{job}.tsv"
    params:
        options=pivot_options(),
        span_limit=config["decoder"]["span_limit"],
    threads: 1
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/pivot_part.py"


rule bias_grammar:
    """The paraphrase grammar with self-paraphrase bias b (eq. 5.3-5.10), sorted, from the
    pairing jobs' parts (with samt.paraphraser, the labelled grammar collapsed to X); b = 0 is
    unbiased. With paraphrase.identity_feature, every rule also
    gets φ_ident (Ganitkevitch & Callison-Burch, draft §4.1)."""
    input:
        unpack(unbiased_paraphrase_grammar),
    output:
        grammar=PARAPHRASE_GRAMMAR,
    log:
        "logs/{experiment}/bias_grammar/bias{bias}.log",
    benchmark:
        "benchmarks/{experiment}/bias_grammar/bias{bias}.tsv"
    params:
        identity_feature=config["paraphrase"]["identity_feature"],
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/bias_grammar.py"


rule export_grammar:
    """A grammar table in the Joshua/Thrax text format (gzip), for use with other toolkits."""
    input:
        grammar="results/{experiment}/{grammar_table}.parquet",
    output:
        text="results/{experiment}/{grammar_table}.thrax.gz",
    log:
        "logs/{experiment}/export_grammar/{grammar_table}.log",
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/export_grammar.py"


rule grammars:
    """Named target: the bilingual grammar, its filtered tune/test parts, and every biased
    paraphrase grammar of the config."""
    input:
        EFFECTIVE_CONFIG,
        BILINGUAL_GRAMMAR.format(experiment=EXPERIMENT),
        expand(FILTERED_GRAMMAR, experiment=EXPERIMENT, evalset=["tune", "test"]),
        paraphrase_grammars(),


rule thrax_grammars:
    """Named target: the bilingual and biased paraphrase grammars as Joshua/Thrax text."""
    input:
        EFFECTIVE_CONFIG,
        BILINGUAL_GRAMMAR.format(experiment=EXPERIMENT).replace(".parquet", ".thrax.gz"),
        [path.replace(".parquet", ".thrax.gz") for path in paraphrase_grammars()],


rule oov_paraphrased_grammars:
    """Named target: the tune and test grammars augmented with rules for their OOV phrases
    borrowed from distributional paraphrases (Marton et al. 2009), and the paraphrases."""
    input:
        EFFECTIVE_CONFIG,
        expand(OOV_PARAPHRASED_GRAMMAR, experiment=EXPERIMENT, evalset=["tune", "test"],
               oov_variant=""),
