"""What the shipped configs ask the workflow to build (circle.pipeline.plan): run sets, the
files of tuning and report jobs, the pivot bitexts' systems, as the rules receive them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from circle.pipeline.config import ConfigError, config_problems
from circle.pipeline.plan import RUN_SET_PATTERN, RUN_SETS, Plan

ROOT = Path(__file__).resolve().parents[2]


def config(*overlays: str, **changes) -> dict:
    """config/config.yaml, each config/<overlay>.yaml over it (section by section, as
    Snakemake merges --configfile), then ``changes`` (section -> keys), with the schema's
    defaults."""
    merged = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    layers = [yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text(encoding="utf-8"))
              for name in overlays]
    for layer in [*layers, changes]:
        for section, values in layer.items():
            merged[section] = ({**merged.get(section, {}), **values}
                               if isinstance(values, dict) else values)
    validate(merged, schema=str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    return merged


@pytest.fixture(scope="module")
def default() -> Plan:
    return Plan(config())


def names(runs) -> list[str]:
    return [run.name for run in runs]


def test_the_config_run_set_is_every_condition_and_replicate(default):
    runs = names(default.evaluated_runs("default", ""))
    assert len(runs) == 10 * 3 and runs[:4] == ["1H.rep0", "1H.rep1", "1H.rep2", "2H.rep0"]
    assert runs == names(default.tuning_runs())
    assert default.max_paraphrases() == 3 and default.max_paraphrases(targeted=True) == 3


def test_the_held_out_system_evaluates_only_its_figures_runs():
    plan = Plan(config(figures={"heldout_blocks": [0.1]}))
    heldout = names(plan.evaluated_runs("default/heldout", ""))
    assert all(names(plan.evaluated_runs("default/heldout", run_set)) == heldout
               for run_set in RUN_SETS)
    assert heldout[:3] == ["1H_t0.rep0", "1H_t0.rep1", "1H_t0.rep2"]
    assert all(re.search(r"_t\d", run) for run in heldout)
    assert not any(re.search(r"_t\d", run)
                   for run in names(plan.evaluated_runs("default", "paper/")))
    inputs = plan.paper_figure_inputs("default", "fig4_12")
    assert inputs["table"] == "results/default/heldout/evaluation/results.parquet"
    assert plan.paper_figure_inputs("default", "fig4_10")["table"] == (
        "results/default/evaluation/paper/results.parquet")


def test_the_run_sets_are_registered_and_the_wildcard_matches_only_theirs(default):
    assert list(RUN_SETS) == ["", "paper/", "dose/", "lattice/", "oov/"]
    assert all(re.fullmatch(RUN_SET_PATTERN, prefix) for prefix in RUN_SETS)
    assert not any(re.fullmatch(RUN_SET_PATTERN, prefix) for prefix in ("oov", "figures/"))
    assert len({tuple(names(default.evaluated_runs("default", p))) for p in RUN_SETS}) == 5
    with pytest.raises(ValueError, match=r"unknown run set 'figures/'; .*'dose/' the dose-resp"):
        default.evaluated_runs("default", "figures/")


def test_the_lattice_and_dose_run_sets_hold_their_baselines(default):
    lattice = names(default.evaluated_runs("default", "lattice/"))
    assert {"1H.rep0", "2H.rep0", "4H.rep2", "2H+1L.rep0", "2H+2L.rep2"} <= set(lattice)
    dose = names(default.evaluated_runs("default", "dose/"))
    assert {"1H.rep0", "2H.rep0", "1H+1P.rep0", "1H+1X_kjv.rep0"} <= set(dose)
    assert default.lattice_counts == {2: 2}


def test_a_tuning_run_reads_its_start_and_for_1h_kt_the_targeted_paraphrasers_parts(default):
    plain = default.tuning_inputs("default", "2H", 0)
    assert plain["weights"] == "results/default/weights/untuned-translation.txt"
    assert plain["lm"] == "results/default/lm/3gram.binary" and "choice" not in plain
    targeted = default.tuning_inputs("default", "1H+2T", 1)
    assert targeted["weights"] == "results/default/weights/1H.rep1.txt"
    assert targeted["choice"] == "results/default/grid/chosen.parquet"
    assert targeted["paraphraser_weights"] == "results/default/weights/paraphraser-bias0.txt"
    assert len(targeted["paraphrase_grammars"]) == len(default.config["paraphrase"]["biases"])
    own = default.tuning_inputs("default", "1H+1T_b0_w-2", 0)
    assert "choice" not in own  # its own configuration, no grid needed
    assert default.start_decode("default", "1H+1T", 2) == (
        "results/default/decode/1H.rep2/tune.nbest.parquet")
    params = default.tuning_job_params("default", "1H+1T_b0_w-2", 0)
    assert params["targeted"]["point"] == {"bias": 0.0, "weight": -2.0}
    assert params["targeted"]["depth"] == 3 and params["seed"] == default.tuning_seed(
        "1H+1T_b0_w-2.rep0")


def test_a_configured_point_takes_the_grid_out_of_every_targeted_input():
    plan = Plan(config(grid_search={"point": {"bias": 0.1, "weight": -0.5}}))
    assert "choice" not in plan.tuning_inputs("default", "1H+1T", 0)
    assert "choice" not in plan.reference_quality_inputs("default")


def test_reference_quality_reads_the_paraphrases_and_targeted_runs_only_where_configured(default):
    inputs = default.reference_quality_inputs("default")
    assert inputs["paraphrases"] == (
        "results/default/paraphrase/untargeted-bias0/tune.nbest.parquet")
    assert len(inputs["targeted_runs"]) == 3 * 3 and len(inputs["tuned"]) == 3
    plain = Plan(config(tuning={"conditions": ["1H", "2H"]})).reference_quality_inputs("default")
    assert "paraphrases" not in plain and "targeted_runs" not in plain and "choice" not in plain


def test_the_default_pivots_from_the_mt_grammar_and_aligns_nothing_more(default):
    assert default.pivot_pairs == {} and default.pivot_language_systems == []
    assert default.pivot_grammars() == ["results/default/grammar/bilingual.parquet"]
    assert default.alignment_path("default") == default.config["alignment"]["frozen"]
    assert default.alignment_path("default/heldout") == (
        "results/default/heldout/align/links.parquet")
    assert default.paraphraser_lm("default", 3) == "results/default/lm/3gram.binary"


def test_the_ladder_replays_its_pivot_alignments_and_extracts_the_language_from_all_five():
    plan = Plan(config("ladder-es-english"))
    systems = sorted(plan.pivot_pairs)
    assert systems == [f"ladder-es-english/pivots/es-{v}" for v in ("bbe", "dar", "web", "ylt")]
    assert plan.pivot_language_systems == ["ladder-es-english/pivot/es"]
    assert plan.alignment_path(systems[0]) == "resources/alignment/bible-es-bbe.parquet"
    inputs = plan.pivot_language_inputs("ladder-es-english/pivot/es")
    assert inputs["bitexts"][0] == "results/ladder-es-english/tokenized/train.parquet"
    assert inputs["alignments"][0] == plan.config["alignment"]["frozen"]  # the KJV pair's
    assert len(inputs["bitexts"]) == 5
    assert plan.pivot_grammars() == [
        "results/ladder-es-english/pivot/es/grammar/bilingual.parquet"]
    assert plan.paraphraser_lm("ladder-es-english", 5) == (
        "results/ladder-es-english/paraphrase/lm/5gram.binary")
    assert plan.paraphraser_lm("ladder-es-english/heldout", 5) == (
        "results/ladder-es-english/heldout/lm/5gram.binary")
    assert len(plan.paraphraser_lm_texts()) == 5


def test_the_languages_rung_pivots_each_language_and_replays_frozen_pivot_alignments():
    """Five languages with the KJV: Spanish's grammar is the MT grammar's; the four foreign
    Bibles' shipped alignments are replayed (alignment.frozen_pivots), which refreeze_alignment
    rewrites; a pair without one is aligned by eflomal."""
    plan = Plan(config("ladder-languages-kjv"))
    systems = sorted(plan.pivot_pairs)
    assert systems == [f"ladder-languages-kjv/pivots/{lang}-kjv" for lang in ("de", "fr", "it",
                                                                              "ru")]
    assert plan.pivot_grammars() == ["results/ladder-languages-kjv/grammar/bilingual.parquet",
                                     *(f"results/ladder-languages-kjv/pivot/{lang}/grammar/"
                                       "bilingual.parquet" for lang in ("fr", "it", "de", "ru"))]
    eflomal = "results/ladder-languages-kjv/pivots/{}-kjv/align/eflomal.parquet"
    shipped = "resources/alignment/bible-{}-kjv.parquet"
    assert plan.alignment_path("ladder-languages-kjv/pivots/fr-kjv") == shipped.format("fr")
    assert plan.refrozen_alignments() == {
        "results/ladder-languages-kjv/align/eflomal.parquet": plan.config["alignment"]["frozen"],
        **{eflomal.format(lang): shipped.format(lang) for lang in ("fr", "it", "de", "ru")}}
    frozen = str(ROOT / "resources" / "alignment" / "bible-es-kjv.parquet")  # another table
    replayed = Plan(config("ladder-languages-kjv", alignment={"frozen_pivots": {"fr-kjv": frozen}}))
    assert replayed.alignment_path("ladder-languages-kjv/pivots/fr-kjv") == frozen
    assert replayed.alignment_path("ladder-languages-kjv/pivots/it-kjv") == eflomal.format("it")
    assert replayed.refrozen_alignments()[eflomal.format("fr")] == frozen
    with pytest.raises(ConfigError, match="frozen_pivots.fr-kjv: .*missing.parquet does not exist"):
        Plan(config("ladder-languages-kjv", alignment={"frozen_pivots": {
            "fr-kjv": "missing.parquet"}})).alignment_path("ladder-languages-kjv/pivots/fr-kjv")


def test_frozen_pivot_alignments_name_pivot_bitexts_other_than_the_training_one():
    problems = config_problems(config("ladder-languages-kjv", alignment={"frozen_pivots": {
        "es-kjv": "a.parquet", "fr-web": "b.parquet", "fr-kjv": "c.parquet"}}))
    assert problems == ["alignment.frozen_pivots: fr-web is not a bitext of paraphrase.pivots",
                        "alignment.frozen_pivots: es-kjv is the MT training bitext, aligned as "
                        "alignment.frozen says"]


def test_refreeze_rewrites_only_the_alignments_it_names():
    """alignment.refreeze: the training alignment and the pairs it names, and nothing that
    would send eflomal's jobs again (the rung's shipped tables are shared with other rungs)."""
    everything = Plan(config("ladder-languages-kjv"))
    one = Plan(config("ladder-languages-kjv", alignment={"refreeze": ["fr-kjv"]}))
    eflomal = "results/ladder-languages-kjv/pivots/fr-kjv/align/eflomal.parquet"
    assert one.refrozen_alignments() == {eflomal: "resources/alignment/bible-fr-kjv.parquet"}
    assert len(everything.refrozen_alignments()) == 5
    training = Plan(config("ladder-languages-kjv", alignment={"refreeze": ["training"]}))
    assert training.refrozen_alignments() == {
        "results/ladder-languages-kjv/align/eflomal.parquet":
            training.config["alignment"]["frozen"]}
    assert one.alignment_options() == everything.alignment_options()


def test_refreeze_names_only_frozen_alignments_of_the_config():
    problems = config_problems(config("ladder-languages-kjv", alignment={
        "refreeze": ["fr-kjv", "fr-web", "training"]}))
    assert problems == ["alignment.refreeze: fr-web is not a frozen alignment of this config "
                        "(it names: de-kjv, fr-kjv, it-kjv, ru-kjv, training; training is "
                        "alignment.frozen, the others are pairs of alignment.frozen_pivots)"]


def test_a_frozen_alignment_that_does_not_fit_the_config_is_refused_when_asked_for():
    plan = Plan(config(alignment={"symmetrization": "intersect"}))
    with pytest.raises(ConfigError, match="alignment"):
        plan.alignment_path("default")


def test_the_default_corpus_params_omit_the_default_single_reference_rule(default):
    assert "single_reference" not in default.corpus_params()
    assert default.corpus_files() == [default.config["corpus"]["bible"]["table"]]


def test_the_pivot_and_eflomal_params_leave_out_keys_their_jobs_do_not_read(default):
    """Keys added since a run keep its pivot and alignment jobs' params: the foreign Bibles'
    table is the pivot bitexts' input, frozen_pivots says what is replayed; the settings that
    change a pivot or an alignment stay in."""
    assert "foreign_bibles" not in default.pivot_options()
    assert "identity_feature" not in default.pivot_options()
    # the bias grid and the paraphraser's LMs are read after pivoting: changing them or
    # turning φ_ident on leaves the pivot jobs' params as they were
    for changed in ({"biases": [0, 0.25]}, {"language_models": "pivots"},
                    {"identity_feature": True}):
        assert Plan(config(paraphrase=changed)).pivot_options() == default.pivot_options()
    assert Plan(config(paraphrase={"min_count": 2})).pivot_options()["min_count"] == 2
    assert default.pivot_options()["min_count"] == 1
    frozen = Plan(config("ladder-es-english"))
    assert frozen.alignment_options() == default.alignment_options()
    assert "frozen_pivots" not in default.alignment_options()
    assert default.alignment_options()["model"] == 3


def test_only_a_training_sample_adds_its_left_out_verses_to_the_oov_monolingual_text(default):
    """Without corpus.train_segments prepare_corpus keeps its params and the OOV paraphrases
    read the splits they always read; with it (config/oov-10k.yaml) they also read the verses
    the sample leaves out, the held-out system's too."""
    assert "train_segments" not in default.corpus_params()
    splits = ["train", "tune", "test", "paratune"]
    assert default.oov_monolingual("default") == [
        f"results/default/tokenized/{split}.parquet" for split in splits]
    for size in ("10k", "20k"):
        plan = Plan(config(f"oov-{size}"))
        assert plan.corpus_params()["train_segments"] == int(size[:2]) * 1000
        unused = f"results/oov-{size}/tokenized/train_unused.parquet"
        for system in plan.mt_systems:
            assert plan.oov_monolingual(system) == [
                *(f"results/{system}/tokenized/{split}.parquet" for split in splits), unused]


def test_the_mt_system_decodes_with_the_filtered_grammar_unless_oov_paraphrases_translate(
        default):
    """oov_paraphrase.translate picks the grammar of every MT decode and tuning run, of the
    experiment and of its held-out system, in one place; the paraphrase search's settings do
    not see the switch."""
    assert not default.oov_paraphrased
    assert default.translation_grammar("default", "test") == (
        "results/default/grammar/filtered/test.parquet")
    assert default.tuning_inputs("default", "4H", 0)["grammar"] == (
        "results/default/grammar/filtered/tune.parquet")
    settings = default.oov_paraphrase_settings("")
    assert "translate" not in settings and "variants" not in settings
    assert settings["seed"] == default.config["seed"]
    plan = Plan(config("oov-paraphrases"))
    assert plan.oov_paraphrased and plan.experiment == "oov-paraphrases"
    for system in ("oov-paraphrases", "oov-paraphrases/heldout"):
        assert plan.translation_grammar(system, "test") == (
            f"results/{system}/grammar/oov_paraphrased/test.parquet")
    for condition in ("1H", "4H"):
        assert plan.tuning_inputs("oov-paraphrases", condition, 2)["grammar"] == (
            "results/oov-paraphrases/grammar/oov_paraphrased/tune.parquet")
    assert plan.mt_systems == ["oov-paraphrases", "oov-paraphrases/heldout"]
    # the search is the default's: the switch changes no param of the paraphrase jobs
    assert plan.oov_paraphrase_settings("") == settings


def test_the_oov_run_set_tunes_each_baseline_and_its_augmented_twin(default):
    """Marton et al. (2009)'s Table 4 on one bitext: nH (null tuning_conditions, the tune
    set's four references) beside 4H_oov, each replicate, and 1H, 4H's baseline in the
    evaluation; the decodes of 4H_oov's weights and
    its start weights read the augmented grammars, 4H's the filtered ones."""
    runs = default.oov_tuning_runs()
    variants = ["unigrams", "minscore06", "split", "stoplist500", "stoplist8000"]
    assert names(runs) == [f"{c}.rep{r}" for c in ("1H", "4H", "4H_oov",
                                                   *(f"4H_oov-{v}" for v in variants))
                           for r in range(3)]
    assert default.evaluated_runs("default", "oov/") == runs
    assert default.translation_grammar("default", "test", "4H_oov.rep1") == (
        "results/default/grammar/oov_paraphrased/test.parquet")
    assert default.translation_grammar("default", "tune", "untuned-translation_oov") == (
        "results/default/grammar/oov_paraphrased/tune.parquet")
    assert default.translation_grammar("default", "test", "4H.rep1") == (
        "results/default/grammar/filtered/test.parquet")
    assert default.start_decode("default", "4H_oov", 0) == (
        "results/default/decode/untuned-translation_oov/tune.nbest.parquet")
    untuned = default.untuned_weights("translation_oov")
    assert untuned == {**default.untuned_weights("translation"),
                       "log_paraphrase_similarity": 0.2}
    assert "log_paraphrase_similarity" not in default.untuned_weights("translation")
    inputs = default.oov_report_inputs("default")
    assert inputs["baseline"] == "results/default/decode/4H.rep0/test.1best.txt"
    assert inputs["augmented"] == "results/default/decode/4H_oov.rep0/test.1best.txt"
    assert inputs["test_augmented"] == "results/default/grammar/oov_paraphrased/test.parquet"
    assert inputs["tune_augmented-split"] == (
        "results/default/grammar/oov_paraphrased-split/tune.parquet")
    assert inputs["tuning_logs"][0] == "results/default/tune/4H_oov.rep0.parquet"
    assert len(inputs["tuning_logs"]) == 6 * 3  # the augmented runs'
    # the paraphrase search does not see which runs decode with its rules
    plan = Plan(config(oov_paraphrase={"tuning_conditions": ["1H", "2H_ter"],
                                       "untuned_weight": 0.5, "variants": {}}))
    assert names(plan.oov_tuning_runs()[::3]) == [
        "1H.rep0", "1H_oov.rep0", "1H_ter.rep0", "2H_ter.rep0", "2H_oov_ter.rep0"]
    assert plan.oov_paraphrase_settings("") == default.oov_paraphrase_settings("")


def test_each_oov_variant_searches_augments_and_starts_with_its_own_settings(default):
    """A variant overrides oov_paraphrase's search settings or features: its own paraphrase
    search, augmented grammars (the split variant's with two paraphrase features) and untuned
    weights; the stoplist candidates are the section and the variants that change only the
    threshold."""
    base = default.oov_paraphrase_settings("")
    assert default.oov_paraphrase_settings("unigrams") == {**base, "max_phrase_length": 1}
    assert default.oov_paraphrase_settings("minscore06") == {**base, "min_score": 0.6}
    assert default.oov_paraphrase_settings("split") == base
    assert default.oov_feature_split("split") == 2 and default.oov_feature_split("") is None
    assert default.translation_grammar("default", "test", "4H_oov-unigrams.rep2") == (
        "results/default/grammar/oov_paraphrased-unigrams/test.parquet")
    untuned = default.untuned_weights("translation")
    assert default.untuned_weights("translation_oov-split") == {
        **untuned, "log_paraphrase_similarity_short": 0.2,
        "log_paraphrase_similarity_long": 0.2}
    assert default.untuned_weights("translation_oov-stoplist500") == {
        **untuned, "log_paraphrase_similarity": 0.2}
    variants = default.oov_report_variants()
    assert [name for name, v in variants.items() if v["stoplist_candidate"]] == [
        "", "stoplist500", "stoplist8000"]
    assert variants["unigrams"]["max_length"] == 1
    assert variants["stoplist8000"]["stoplist_threshold"] == 8000
    assert variants["split"]["settings"] == "feature_split 2"
    assert variants[""]["settings"] == "oov_paraphrase"


@pytest.mark.parametrize(("changes", "problem"), [
    ({"oov_paraphrase": {"tuning_conditions": ["1H_meteor"]}}, "unknown tuning condition"),
    ({"oov_paraphrase": {"tuning_conditions": ["4H_oov"]}}, "is not a kH condition"),
    ({"oov_paraphrase": {"tuning_conditions": ["5H"]}}, "the tune set has 4"),
    ({"oov_paraphrase": {"tuning_conditions": ["4H"], "translate": True}}, "kH_oov would be kH"),
    ({"tuning": {"conditions": ["1H", "4H_oov"]}}, "run with `snakemake oov_translation`"),
])
def test_oov_run_set_problems_are_refused(changes, problem):
    problems = config_problems(config(**changes))
    assert any(problem in text for text in problems), problems


def test_nbest_reranking_gives_each_decoder_its_reranking_lm_only_when_asked(default):
    """lm.rerank_nbest: the MT system's jobs get its reranking LM, the paraphraser's jobs the
    paraphraser's (its own with paraphrase.language_models: pivots); without the option
    nothing, so a tuning run's inputs stay as they were."""
    assert default.nbest_reranking_inputs("default") == {}
    assert "rerank_lm" not in default.tuning_inputs("default", "1H+1P", 0)
    plan = Plan(config("five-gram-reranking"))
    assert plan.nbest_reranking_inputs("five-gram-reranking") == {
        "rerank_lm": "results/five-gram-reranking/lm/5gram.binary"}
    assert plan.nbest_reranking_inputs("five-gram-reranking", paraphraser=True) == {
        "rerank_lm": "results/five-gram-reranking/lm/5gram.binary"}
    assert plan.tuning_inputs("five-gram-reranking", "1H+1P", 0)["rerank_lm"] == (
        "results/five-gram-reranking/lm/5gram.binary")
    ladder = Plan(config("ladder-es-english", lm={"rerank_nbest": True}))
    assert ladder.nbest_reranking_inputs("ladder-es-english", paraphraser=True) == {
        "rerank_lm": "results/ladder-es-english/paraphrase/lm/5gram.binary"}
    assert ladder.nbest_reranking_inputs("ladder-es-english") == {
        "rerank_lm": "results/ladder-es-english/lm/5gram.binary"}
