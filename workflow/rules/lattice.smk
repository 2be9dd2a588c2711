# Pang, Knight & Marcu (2003): word lattices merged from the references of the evaluation sets
# (circle.lattice). Not in the default target.


rule parse_references:
    """Parse every reference of an evaluation set into phrase-structure trees (spaCy projected
    to phrase structure, circle.grammar.parse): the lattices' parser stage, a table of its own
    that other experiments can reuse."""
    input:
        table=CORPUS_TABLE.format(experiment="{experiment}", split="{evalset}"),
    output:
        parses="results/{experiment}/lattice/{evalset}.parses.parquet",
    log:
        "logs/{experiment}/parse_references/{evalset}.log",
    benchmark:
        "benchmarks/{experiment}/parse_references/{evalset}.tsv"
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/parse_references.py"


rule report_lattice:
    """One test verse's word lattice drawn by Graphviz, with its counts and the sentences no
    translator wrote (circle.figures.lattice; the seed's Fig. 2 and 6)."""
    input:
        parses="results/{experiment}/lattice/test.parses.parquet",
    output:
        markdown=report_file("lattice.md"),
        html=report(
            report_file("lattice.html"),
            caption="../report/lattice.rst",
            category="Word lattices",
        ),
        png=report_file("lattice.png"),
        dot=report_file("lattice.dot"),
    log:
        "logs/{experiment}/report_lattice.log",
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_lattice.py"


rule lattice_parses:
    """Named target: the parse trees of the references of the tune and test sets, and one test
    verse's lattice drawn."""
    input:
        EFFECTIVE_CONFIG,
        expand(
            f"results/{EXPERIMENT}/lattice/{{evalset}}.parses.parquet", evalset=("tune", "test")
        ),
        report_file("lattice.md", EXPERIMENT),


rule lattice_paraphrases_table:
    """The paraphrase pairs of every verse's lattice (circle.lattice.pairs; the seed's §4.1):
    pairs of paths between the same two states of the squeezed lattice of all its references."""
    input:
        parses="results/{experiment}/lattice/{evalset}.parses.parquet",
    output:
        table="results/{experiment}/lattice/{evalset}.paraphrases.parquet",
    log:
        "logs/{experiment}/lattice_paraphrases_table/{evalset}.log",
    benchmark:
        "benchmarks/{experiment}/lattice_paraphrases_table/{evalset}.tsv"
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/lattice_paraphrases.py"


rule report_lattice_paraphrases:
    """The pairs' counts, examples and the seed's Table 2, recall of WordNet-consistent synonyms
    (circle.lattice.pairs_page; WordNet from Debian's wordnet-base, envs/setup.sh)."""
    input:
        pairs=expand(
            "results/{{experiment}}/lattice/{evalset}.paraphrases.parquet",
            evalset=("tune", "test"),
        ),
        parses=expand(
            "results/{{experiment}}/lattice/{evalset}.parses.parquet", evalset=("tune", "test")
        ),
    output:
        markdown=report_file("lattice_paraphrases.md"),
        html=report(
            report_file("lattice_paraphrases.html"),
            caption="../report/lattice_paraphrases.rst",
            category="Word lattices",
        ),
    log:
        "logs/{experiment}/report_lattice_paraphrases.log",
    benchmark:
        "benchmarks/{experiment}/report_lattice_paraphrases.tsv"
    params:
        evalsets=["tune", "test"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_lattice_paraphrases.py"


rule lattice_paraphrases:
    """Named target: the paraphrase pairs of the tune and test verses' lattices and their page
    (report/lattice_paraphrases.md). Not part of the default target."""
    input:
        EFFECTIVE_CONFIG,
        report_file("lattice_paraphrases.md", EXPERIMENT),


rule lattice_references:
    """New tuning references for kH+mL (circle.lattice.references): per tune segment, the best
    sentences by the reranking LM of the squeezed lattice of its first {human} references in
    the seeded order that none of them is, tokenised like the tune references."""
    input:
        tune=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
        parses="results/{experiment}/lattice/tune.parses.parquet",
        lm=LM_BINARY.format(experiment="{experiment}", order=config["lm"]["reranking_order"]),
    output:
        table=LATTICE_REFERENCES,
    log:
        "logs/{experiment}/lattice_references/{human}H.log",
    benchmark:
        "benchmarks/{experiment}/lattice_references/{human}H.tsv"
    params:
        sentences=lambda wildcards: LATTICE_COUNTS[int(wildcards.human)],
        lang=config["preprocess"]["target_lang"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
        human=r"\d+",
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/lattice_references.py"


rule report_lattice_tuning:
    """The lattice run set's table and plot (circle.experiments.lattice_tuning): test BLEU, TER
    and chrF per number of tuning references, 1H .. nH and each kH+mL series, marked against
    each row's baseline (kH for kH+mL), and how many segments got how many lattice
    sentences."""
    input:
        table=EVALUATION_TABLE.format(experiment="{experiment}", run_set="lattice/"),
        conditions=EVALUATION_CONDITIONS.format(experiment="{experiment}", run_set="lattice/"),
        lattices=lambda wildcards: [
            LATTICE_REFERENCES.format(experiment=wildcards.experiment, human=k)
            for k in sorted(LATTICE_COUNTS)
        ],
    output:
        markdown=report_file("lattice_tuning.md"),
        html=report(
            report_file("lattice_tuning.html"),
            caption="../report/lattice_tuning_table.rst",
            category="Word lattices",
        ),
        csv=report_file("lattice_tuning.csv"),
        plot=report(
            report_file("lattice_tuning.png"),
            caption="../report/lattice_tuning.rst",
            category="Word lattices",
        ),
    log:
        "logs/{experiment}/report_lattice_tuning.log",
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_lattice_tuning.py"


rule lattice_tuning:
    """Named target: tuning with sentences drawn from word lattices, every kH+mL of
    lattice.tuning_conditions with tuning.replicates replicates beside 1H .. nH, evaluated as
    the run set evaluation/lattice/ (each kH+mL against kH). Not part of the default target."""
    input:
        EFFECTIVE_CONFIG,
        report_file("lattice_tuning.md", EXPERIMENT),
