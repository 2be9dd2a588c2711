# The thesis's other figures: the tuning runs only they need (circle.experiments.paper_runs),
# their tables with the thesis's numbers beside ours (circle.figures.paper, circle.figures.focus),
# and one page over every figure the project reproduces.


rule report_paper_figure:
    """One figure of circle.figures.paper (Fig. 4.8/4.9, 4.10, 4.11/4.12, 5.14): table (Markdown,
    HTML, CSV) with the thesis's numbers, significance marks against each condition's baseline, and
    a plot."""
    input:
        unpack(paper_figure_inputs),
    output:
        markdown=report_file("{figure}.md"),
        html=report(
            report_file("{figure}.html"),
            caption="../report/paper_figure_table.rst",
            category="Thesis figures",
        ),
        csv=report_file("{figure}.csv"),
        plot=report(
            report_file("{figure}.png"),
            caption="../report/paper_figure.rst",
            category="Thesis figures",
        ),
    log:
        "logs/{experiment}/report_paper_figure/{figure}.log",
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
        figure="|".join(f.key for f in figures()) or "none",
    params:
        figure=lambda wildcards: figure(wildcards.figure),
        thesis_numbers=THESIS_NUMBERS,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_paper_figure.py"


rule report_paper_tables:
    """The page over every thesis figure the project reproduces: each with its one-line reading
    and its page; the figures it cannot reproduce (human judgements) listed as such."""
    input:
        figures=lambda wildcards: [report_file(f"{f.key}.csv", wildcards.experiment)
                                   for f in figures()],
        fig4_3=report_file("fig4_3.csv"),
        grid=report_file("grid_search.md"),
        chosen=GRID_CHOICE,
        fig5_4=report_file("fig5_4.csv"),
        fig5_10=lambda wildcards: ([report_file("fig5_10.csv", wildcards.experiment)]
                                   if targeted_conditions() else []),
        fig6_2=lambda wildcards: ([report_file("fig6_2.csv", wildcards.experiment)]
                                  if PLAN.focus_runs() else []),
    output:
        markdown=report_file("paper_tables.md"),
        html=report(
            report_file("paper_tables.html"),
            caption="../report/paper_tables.rst",
            category="Thesis figures",
        ),
    log:
        "logs/{experiment}/report_paper_tables.log",
    params:
        figures=figures(),
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_paper_tables.py"


rule paper_tables:
    """Named target: every thesis figure the project reproduces (Fig. 4.3, 4.8/4.9, 4.10,
    4.11/4.12, 5.3–5.8, 5.4, 5.10, 5.14, 6.2) and the page over them,
    results/<exp>/report/paper_tables.md."""
    input:
        EFFECTIVE_CONFIG,
        report_file("paper_tables.md", EXPERIMENT),
        rules.reference_quality.input if reference_count("tune") > 1 else [],


rule fig4_12:
    """Named target: thesis Fig. 4.11/4.12, 1H and 1H+1P of the held-out system tuned on the
    tune set and on the sets enlarged by held-out training blocks (part of paper_tables)."""
    input:
        EFFECTIVE_CONFIG,
        report_file("fig4_12.md", EXPERIMENT) if config["figures"]["heldout_blocks"] else [],


rule report_focus:
    """Thesis Fig. 6.2: tune-set BLEU against the second reference before and after tuning
    (focus, reachability) and the gain on the first, for the 2H, 1H+1P and 1H+1T runs."""
    input:
        unpack(focus_inputs),
        tune=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
    output:
        markdown=report_file("fig6_2.md"),
        html=report(
            report_file("fig6_2.html"),
            caption="../report/fig6_2_table.rst",
            category="Thesis figures",
        ),
        csv=report_file("fig6_2.csv"),
        plot=report(
            report_file("fig6_2.png"),
            caption="../report/fig6_2.rst",
            category="Thesis figures",
        ),
    log:
        "logs/{experiment}/report_focus.log",
    params:
        runs=lambda wildcards: PLAN.focus_runs(),
        settings=decoder_settings(),
        # its own cache: the tuning runs' cache, which report_targeted samples, stays theirs
        targeted=lambda wildcards: {
            **targeted_settings(wildcards),
            "cache": f"results/{wildcards.experiment}/targeted/fig6_2-cache",
        },
        lowercased=config["preprocess"]["lowercase"],
    threads: 2
    resources:
        runtime=runtime_minutes,
        mem_mb=memory_mb,
    conda:
        "../../envs/circle.yaml"
    script:
        "../scripts/report_focus.py"


rule hold_out_blocks:
    """The held-out system's tables (circle.experiments.heldout, Fig. 4.11/4.12): the training
    bitext without a seeded block of training segments (figures.heldout_blocks) and its alignment
    links, the tune set's single references followed by the block (tuning sets T0-T<n>), and
    the shared test and paraphraser-tuning sets; every later stage of the held-out system runs
    the experiment's rules on them."""
    input:
        train=TOKENIZED_TABLE.format(experiment="{experiment}", split="train"),
        alignment=alignment_source,
        tune=EVALSET_TABLE.format(experiment="{experiment}", evalset="tune"),
        test=TOKENIZED_TABLE.format(experiment="{experiment}", split="test"),
        paratune=TOKENIZED_TABLE.format(experiment="{experiment}", split="paratune"),
    output:
        train=TOKENIZED_TABLE.format(experiment="{experiment}/heldout", split="train"),
        alignment=ALIGNMENT_LINKS.format(experiment="{experiment}/heldout"),
        tune=TOKENIZED_TABLE.format(experiment="{experiment}/heldout", split="tune"),
        test=TOKENIZED_TABLE.format(experiment="{experiment}/heldout", split="test"),
        paratune=TOKENIZED_TABLE.format(experiment="{experiment}/heldout", split="paratune"),
    log:
        "logs/{experiment}/hold_out_blocks.log",
    params:
        fractions=config["figures"]["heldout_blocks"],
        seed=config["seed"],
    wildcard_constraints:
        experiment=MAIN_SYSTEM,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/hold_out_blocks.py"
