# Pang, Knight & Marcu (2003): word lattices merged from the references of the evaluation sets
# (circle.lattice). Not in the default target.


rule parse_references:
    """Parse every reference of an evaluation set into phrase-structure trees (spaCy projected
    to phrase structure, circle.lattice.parse): the lattices' parser stage, a table of its own
    that other experiments can reuse."""
    input:
        table="results/{experiment}/corpus/{evalset}.parquet",
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
    translator wrote (circle.lattice.page; the seed's Fig. 2 and 6)."""
    input:
        parses="results/{experiment}/lattice/test.parses.parquet",
    output:
        markdown="results/{experiment}/report/lattice.md",
        html=report(
            "results/{experiment}/report/lattice.html",
            caption="../report/lattice.rst",
            category="Word lattices",
        ),
        png="results/{experiment}/report/lattice.png",
        dot="results/{experiment}/report/lattice.dot",
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
        f"results/{EXPERIMENT}/report/lattice.md",
