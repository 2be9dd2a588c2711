"""tuning.paraphraser_metric on the tiny corpus: the φ_ident paraphraser tuned on BLEU, then on
iBLEU (Sun & Zhou 2012) in the same directory, as config/identity-ibleu.yaml tunes it."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from sacrebleu.metrics import BLEU
from test_config_files import effective_config
from test_workflow import ROOT, snakemake, tiny_config

from circle.core.schemas import EVALSET, TUNING_LOG
from circle.core.tables import read_metadata, read_table
from circle.corpus.references import ordered_references
from circle.decoder import DecoderSettings, decode_corpus, load_grammar
from circle.pipeline.plan import Plan

pytestmark = pytest.mark.workflow

RESULTS = "results/tiny"
WEIGHTS = f"{RESULTS}/weights/paraphraser-bias0.5.txt"
LOG = f"{RESULTS}/tune/paraphraser-bias0.5.parquet"
ALPHA = 0.6
"""Below the tiny data's break-even α (about 0.7), where the copy's iBLEU ties the untuned
start's; at 0.9 the copier still wins there (iBLEU 31.1 against the start's 16.7)."""


def corpus_bleu(hypotheses: list[str], references: list[list[str]]) -> float:
    """sacrebleu's corpus BLEU (fraction), the same number of references per hypothesis."""
    streams = [list(stream) for stream in zip(*references, strict=True)]
    return BLEU(tokenize="none").corpus_score(hypotheses, streams).score / 100


def test_the_ibleu_tuned_paraphraser_scores_what_sacrebleu_says_and_stops_copying(tmp_path):
    """The tiny config's 50 % grammar with φ_ident, tuned on BLEU and then with
    ``tuning.paraphraser_metric: ibleu:0.6``: only the paraphraser's tuning job runs again, for
    its metric; its log records the metric; its tune scores of the untuned start and of the
    returned weights are α BLEU(1-best, references) − (1 − α) BLEU(1-best, input) by sacrebleu
    on the paraphraser-tuning set, decoded again here (the input being each segment's first
    reference in the seeded order), and the start's equals the BLEU run's start score on the
    same decode. The copy of every input scores below the untuned start under iBLEU at 0.6, and
    a run returns its best decoded weights, never below its start's, so the iBLEU-tuned
    paraphraser cannot copy every input (the BLEU-tuned one copies them all on this data)."""
    changes = {"paraphrase.identity_feature": True, "tuning.paraphraser_bias": 0.5,
               "figures.untargeted_biases": []}
    config = tiny_config(tmp_path, **changes)
    bleu = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(tmp_path),
                     WEIGHTS, f"{RESULTS}/config.yaml")
    assert bleu.returncode == 0, bleu.stdout + bleu.stderr
    bleu_log = read_table(tmp_path / LOG, TUNING_LOG)
    assert set(bleu_log["metric"]) == {"bleu"}

    settings = yaml.safe_load(config.read_text())
    settings["tuning"]["paraphraser_metric"] = f"ibleu:{ALPHA}"
    config.write_text(yaml.safe_dump(settings))
    ibleu = snakemake("--cores", "2", "--configfile", str(config), "--directory", str(tmp_path),
                      WEIGHTS)
    assert ibleu.returncode == 0, ibleu.stdout + ibleu.stderr
    output = ibleu.stdout + ibleu.stderr
    assert re.findall(r"^(?:local)?rule (\w+):$", output, flags=re.M) == ["tune_paraphraser"]
    assert f"'metric': 'ibleu:{ALPHA}'" in output  # the params that changed

    log = read_table(tmp_path / LOG, TUNING_LOG)
    metadata = read_metadata(tmp_path / LOG)
    assert set(log["metric"]) == {f"ibleu:{ALPHA}"} and metadata["metric"] == f"ibleu:{ALPHA}"
    names = json.loads(metadata["feature_names"])
    effective = yaml.safe_load((tmp_path / RESULTS / "config.yaml").read_text())
    decoder = DecoderSettings.from_config(Plan(effective).decoder_settings())
    grammar = load_grammar(tmp_path / RESULTS / "paraphrase/bias0.5.parquet")
    lm = tmp_path / RESULTS / "lm/3gram.binary"
    ordered = ordered_references(read_table(tmp_path / RESULTS / "sets/paratune.parquet",
                                            EVALSET))
    inputs, references = [refs[0] for refs in ordered], [refs[1:] for refs in ordered]

    def one_best(row) -> list[str]:
        weights = dict(zip(names, row["weights"], strict=True))
        return [hypotheses[0].text for hypotheses in
                decode_corpus(inputs, grammar, lm, weights, decoder, workers=2)]

    def ibleu_of(outputs: list[str]) -> float:
        return (ALPHA * corpus_bleu(outputs, references)
                - (1 - ALPHA) * corpus_bleu(outputs, [[text] for text in inputs]))

    start, returned = log.iloc[0], log[log["returned"]].iloc[0]
    assert list(start["weights"]) == list(bleu_log.iloc[0]["weights"])  # the same untuned start
    start_outputs, returned_outputs = one_best(start), one_best(returned)
    assert start["decode_score"] == pytest.approx(ibleu_of(start_outputs), abs=1e-9)
    assert returned["decode_score"] == pytest.approx(ibleu_of(returned_outputs), abs=1e-9)
    assert bleu_log.iloc[0]["decode_score"] == pytest.approx(
        corpus_bleu(start_outputs, references), abs=1e-9)
    copy = ALPHA * corpus_bleu(inputs, references) - (1 - ALPHA)
    assert copy < start["decode_score"] <= returned["decode_score"]
    copied = sum(out.split() == text.split()
                 for out, text in zip(returned_outputs, inputs, strict=True))
    assert copied < len(inputs)


def test_the_identity_ibleu_overlay_is_the_identity_feature_experiment_tuned_on_ibleu(tmp_path):
    """config/identity-ibleu.yaml over the default config: config/identity-feature.yaml's
    experiment (φ_ident, the 5 % grammar) but for its name, the paraphraser's metric and the
    conditions its header's command tunes (no targeted runs); that command plans the
    paraphraser's tuning on the 5 % grammar and three replicates of 1H, 1H+1P and 1H+3P."""
    default = ROOT / "config" / "config.yaml"
    ibleu = effective_config(tmp_path, "identity-ibleu", default,
                             ROOT / "config" / "identity-ibleu.yaml")
    identity = effective_config(tmp_path, "identity-feature", default,
                                ROOT / "config" / "identity-feature.yaml")
    assert ibleu["tuning"].pop("paraphraser_metric") == "ibleu:0.9"
    assert identity["tuning"].pop("paraphraser_metric") is None
    assert ibleu["tuning"].pop("conditions") == ["1H", "1H+1P", "1H+3P"]
    identity["tuning"].pop("conditions")
    assert {k: v for k, v in ibleu.items() if k != "experiment"} == {
        k: v for k, v in identity.items() if k != "experiment"}
    header = (ROOT / "config" / "identity-ibleu.yaml").read_text()
    command = re.search(r"#   snakemake (.*) \\\n#     -- (.*)\n", header)
    plan = snakemake("-n", *command[1].split()[2:], "--", *command[2].split(), cwd=tmp_path)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.split(r"^(?=(?:local)?rule \w+:$)", plan.stdout, flags=re.M)
    [tuning] = [job for job in jobs if re.match(r"(?:local)?rule tune_paraphraser:", job)]
    assert "input: results/identity-ibleu/sets/paratune.parquet, " \
           "results/identity-ibleu/paraphrase/bias0.05.parquet" in tuning
    runs = sorted(re.search(r"output: results/identity-ibleu/weights/(\S+)\.txt", job)[1]
                  for job in jobs if re.match(r"(?:local)?rule tune_translation:", job))
    assert runs == sorted(f"{c}.rep{r}" for c in ("1H", "1H+1P", "1H+3P") for r in range(3))
