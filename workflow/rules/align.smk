# Word alignment of the tokenised training bitext: eflomal both ways, symmetrised in circle.align.


rule align_corpus:
    """eflomal on a training bitext: the experiment's (unless alignment.frozen replays one) and
    each pivot bitext of paraphrase.pivots other than it."""
    input:
        bitext=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
    output:
        alignment=EFLOMAL_ALIGNMENT,
    log:
        "logs/{experiment}/align_corpus.log",
    benchmark:
        "benchmarks/{experiment}/align_corpus.tsv"
    params:
        options=PLAN.alignment_options(),
    wildcard_constraints:
        experiment=ALIGNED_SYSTEM,
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/align_corpus.py"


rule aligned_corpus:
    """Named target: the tokenised training bitext and its (possibly frozen) alignment."""
    input:
        EFFECTIVE_CONFIG,
        TOKENIZED_TABLE.format(experiment=EXPERIMENT, split="train"),
        lambda wildcards: alignment_path(EXPERIMENT),


rule refreeze_alignment:
    """Named target: run eflomal on the training bitext and make its alignment the frozen one
    (the file alignment.frozen names), which every later stage then reruns from; the same for
    each pivot bitext alignment.frozen_pivots names (alignment.refreeze chooses among them). Add
    --forcerun align_corpus for a new draw when the experiment already has an eflomal
    alignment."""
    input:
        alignments=lambda wildcards: list(PLAN.refrozen_alignments()),
    log:
        f"logs/{EXPERIMENT}/refreeze_alignment.log",
    params:
        frozen=lambda wildcards: list(PLAN.refrozen_alignments().values()),
    localrule: True
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/refreeze_alignment.py"
