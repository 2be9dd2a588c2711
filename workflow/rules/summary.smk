# The run's summary page: every report page of the default target on one page
# (circle.figures.summary).


rule report_summary:
    """What the run found, on one page: the findings of its tables' significance marks, then
    each report page of the default target with its plots, under the commit and the effective
    config (Markdown, and HTML with the plots inlined, the Snakemake report's Summary)."""
    input:
        config=EFFECTIVE_CONFIG,
        files=default_target_summary_inputs,
    output:
        markdown=report_file("index.md"),
        html=report(
            report_file("index.html"),
            caption="../report/summary.rst",
            category="Summary",
        ),
    log:
        "logs/{experiment}/report_summary.log",
    params:
        results=RESULTS,
    conda:
        "../../envs/circle.yaml"
    resources:
        runtime=runtime_minutes,
    script:
        "../scripts/report_summary.py"
