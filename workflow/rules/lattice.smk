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


rule lattice_parses:
    """Named target: the parse trees of the references of the tune and test sets."""
    input:
        EFFECTIVE_CONFIG,
        expand(f"results/{EXPERIMENT}/lattice/{{evalset}}.parses.parquet", evalset=("tune", "test")),
