"""The Bible text cleaners on real markup copied from the source modules and packages.

Every raw string below is verbatim from the installed sources (SWORD modules read with pysword
``clean=False``; pythonbible 0.0.2 packages), so these tests need none of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from circle.corpus.bible_clean import (
    clean_osis,
    clean_pythonbible,
    fix_spanish_capitals,
    proper_noun_lexicon,
    resegment_numbered_text,
    strip_acrostic_letter,
)
from circle.corpus.versification import MAX_OFFSET, flag_shifted, read_flags, write_flags

# --- RV1909 (spaRV1909eb) ------------------------------------------------------------------------

RV_PS_122_4 = (
    '<w lemma="strong:H8033">Y allá</w> <w lemma="strong:H5927">subieron</w> '
    '<w lemma="strong:H7626">las tribus</w>, <w lemma="strong:H7626">las tribus</w> '
    '<w lemma="strong:H3050">de JAH</w>, <transChange type="added">conforme</transChange>'
    '<w lemma="strong:H5715">al testimonio</w><transChange type="added">dado</transChange>'
    '<w lemma="strong:H3478">á Israel</w>, <w lemma="strong:H3034">para alabar</w> '
    '<w lemma="strong:H8033">el nombre</w> <w lemma="strong:H3068">de Jehová</w>. ')
RV_1CHR_10_13_END = ('<w lemma="strong:H1875">consultó</w> <w lemma="strong:H0178">al pythón</w>, '
                     'preguntándo<transChange type="added">le</transChange>, ')
RV_MATT_1_1 = (
    '<w lemma="strong:G0976">LIBRO</w> <w lemma="strong:G1078">de la generación</w> '
    '<w lemma="strong:G2424 G5547">de Jesucristo</w>, <w lemma="strong:G5207">hijo</w> '
    '<w lemma="strong:G1138">de David</w>, <w lemma="strong:G5207">hijo</w> '
    '<w lemma="strong:G0011">de Abraham</w>. ')
RV_NUM_12_16 = '<chapter eID="Num.12"/><div eID="gen134" type="x-p"/>'
RV_PS_119_1 = ('ALEPH. <w lemma="strong:H0835">BIENAVENTURADOS</w> <w lemma="strong:H8549">los '
               'perfectos</w> <w lemma="strong:H1870">de camino</w>; <w lemma="strong:H1980">los '
               'que andan</w> <w lemma="strong:H8451">en la ley</w> <w lemma="strong:H3068">de '
               'Jehová</w>. ')


def test_osis_junctions_get_a_space_but_in_word_transchange_stays_attached():
    assert clean_osis(RV_PS_122_4) == ("Y allá subieron las tribus, las tribus de JAH, conforme "
                                       "al testimonio dado á Israel, para alabar el nombre de "
                                       "Jehová.")
    assert clean_osis(RV_1CHR_10_13_END) == "consultó al pythón, preguntándole,"


def test_osis_multi_lemma_strongs_do_not_leak():
    assert clean_osis(RV_MATT_1_1) == ("LIBRO de la generación de Jesucristo, hijo de David, hijo "
                                       "de Abraham.")


def test_osis_empty_slot_is_empty():
    assert clean_osis(RV_NUM_12_16) == ""


def test_spanish_chapter_capitals_and_acrostic():
    text = strip_acrostic_letter(clean_osis(RV_PS_119_1))
    assert fix_spanish_capitals(text, True, frozenset({"jehová"})) == (
        "Bienaventurados los perfectos de camino; los que andan en la ley de Jehová.")
    assert fix_spanish_capitals("Y ACONTECIÓ que", True, frozenset()) == "Y aconteció que"


def test_spanish_capitals_keep_proper_nouns_titles_and_emphasis():
    nouns = frozenset({"jehová", "moisés", "dios"})
    # Ps 3:1: the capitals follow the inline psalm title.
    assert fix_spanish_capitals("Salmo de David, cuando huía de delante de Absalom su hijo. ¡OH "
                                "Jehová, cuánto se han multiplicado", True, nouns) == (
        "Salmo de David, cuando huía de delante de Absalom su hijo. ¡Oh Jehová, cuánto se han "
        "multiplicado")
    assert fix_spanish_capitals("Y JEHOVÁ habló", True, nouns) == "Y Jehová habló"
    # Exod 3:14 and Dan 5:27 are genuine emphasis, not chapter starts.
    exodus = "Y respondió Dios á Moisés: YO SOY EL QUE SOY."
    assert fix_spanish_capitals(exodus, False, nouns) == exodus
    assert fix_spanish_capitals("TEKEL: Pesado has sido", False, nouns) == "TEKEL: Pesado has sido"
    # Luke 1:5 opens a section mid-chapter.
    assert fix_spanish_capitals("HUBO en los días de Herodes", False, nouns) == (
        "Hubo en los días de Herodes")


def test_proper_noun_lexicon_counts_non_initial_case():
    lexicon = proper_noun_lexicon(["Y habló Jehová á Moisés, diciendo", "dijo Jehová: Sea"])
    assert "jehová" in lexicon and "moisés" in lexicon and "diciendo" not in lexicon


# --- KJV (engKJV2006eb) and WEB (engWEB2015eb) ---------------------------------------------------

KJV_GEN_2_4 = (
    '<div type="x-milestone" subType="x-preverse" sID="pv9"/><div sID="gen13" type="x-p"/> '
    '<div type="x-milestone" subType="x-preverse" eID="pv9"/>¶ <w lemma="strong:H0428">These</w> '
    '<transChange type="added">are</transChange> the <w lemma="strong:H8435">generations</w> of '
    'the <w lemma="strong:H8064">heavens</w>')
KJV_EXOD_6_3_END = ('but by my <w lemma="strong:H8034">name</w> \\nd <w lemma="strong:H3068">'
                    'JEHOVAH</w></divineName> was I not <w lemma="strong:H3045">known</w> '
                    'to them. ')
KJV_EXOD_6_2 = (
    'And <w lemma="strong:H0430">God</w> <w lemma="strong:H1696">spake</w> unto <w lemma="strong:'
    'H4872">Moses</w>, and <w lemma="strong:H0559">said</w> unto him, I <transChange type="added">'
    'am</transChange> the <divineName><w lemma="strong:H3068">LORD</w></divineName>:<note '
    'placement="foot"><reference type="annotateRef">6.2 </reference>the <divineName>LORD\\+nd*: '
    'or, <seg type="x-nested"><divineName>JEHOVAH</divineName></seg></note> ')
KJV_PS_3_1 = (
    '<div type="x-milestone" subType="x-preverse" sID="pv2099"/><title canonical="true" '
    'type="psalm">A <w lemma="strong:H4210">Psalm</w> of <w lemma="strong:H1732">David</w>, '
    'when he <w lemma="strong:H1272">fled</w> <w lemma="strong:H6440">from</w> '
    '<w lemma="strong:H0053">Absalom</w> his <w lemma="strong:H1121">son</w>.</title> '
    '<lg sID="gen2600"/> <l level="1" '
    'sID="gen2601"/> <div type="x-milestone" subType="x-preverse" eID="pv2099"/><divineName><w '
    'lemma="strong:H3068">LORD</w></divineName>, how are they <w lemma="strong:H7231">increased</w>'
    ' that <w lemma="strong:H6862">trouble</w> me!')
KJV_PS_119_9 = (
    '<div type="x-milestone" subType="x-preverse" sID="pv4024"/><title><foreign>ב BETH.</foreign>'
    '</title> <lg sID="gen4643"/> <l level="1" sID="gen4644"/> <div type="x-milestone" '
    'subType="x-preverse" eID="pv4024"/>Wherewithal shall a young <w lemma="strong:H5288">man</w>')
WEB_GEN_1_1 = (
    '<w lemma="strong:H0430">In</w> <w lemma="strong:H0853">the</w> <w lemma="strong:H7225">'
    'beginning</w>, <w lemma="strong:H0430">God</w><note placement="foot"><reference '
    'type="annotateRef">1:1 </reference>The Hebrew word rendered “God” is “אֱלֹהִ֑ים” (Elohim).'
    '</note><w lemma="strong:H1254">created</w> <w lemma="strong:H0853">the</w> <w lemma="strong:'
    'H8064">heavens</w> <w lemma="strong:H0430">and</w> <w lemma="strong:H0853">the</w> <w '
    'lemma="strong:H0776">earth</w>. ')
WEB_GEN_11_2_START = (
    '<w lemma="strong:H5265">traveled</w> <w lemma="strong:H6924">east</w>,<note placement="foot">'
    '<reference type="annotateRef">11:2 </reference>LXX reads “from the east”.</note><w '
    'lemma="strong:H8033">they</w> <w lemma="strong:H4672">found</w>')
WEB_SONG_1_2_START = (
    '<div type="x-milestone" subType="x-preverse" sID="pv8242"/><speaker>Beloved</speaker> <lg '
    'sID="gen15617"/> <l level="1" sID="gen15618"/><div type="x-milestone" subType="x-preverse" '
    'eID="pv8242"/>Let <w lemma="strong:H3588">him</w> kiss <w lemma="strong:H3588">me</w>')
WEB_REV_22_21 = (
    '<w lemma="strong:G3956">all</w> <w lemma="strong:G3956">the</w> saints. Amen.  <chapter '
    'eID="Rev.22"/><div eID="gen35836" type="x-p"/> <div canonical="true" eID="gen35575" '
    'osisID="Rev" type="book"/> <div sID="gen35837" type="glossary"/> <milestone n="Glossary" '
    'type="x-usfm-h"/> <title level="1" type="main">World English Bible Glossary</title> <list> '
    '<item subType="x-introduction" type="x-indent-1"><seg type="keyword">Abaddon</seg> Abaddon is '
    'Hebrew for destruction.</item>')
WEB_2KGS_17_27_QUOTE = ('saying, “<w lemma="strong:H1540">Carry</w> <w lemma="strong:H8033">there'
                        '</w>; <w lemma="strong:H0430">god</w> of the land.” ')


def test_osis_kjv_pilcrow_usfm_and_footnotes():
    assert clean_osis(KJV_GEN_2_4) == "These are the generations of the heavens"
    assert clean_osis(KJV_EXOD_6_3_END) == "but by my name JEHOVAH was I not known to them."
    assert clean_osis(KJV_EXOD_6_2) == "And God spake unto Moses, and said unto him, I am the LORD:"


def test_osis_keeps_psalm_titles_and_drops_acrostic_headings():
    assert clean_osis(KJV_PS_3_1) == ("A Psalm of David, when he fled from Absalom his son. LORD, "
                                      "how are they increased that trouble me!")
    assert clean_osis(KJV_PS_119_9) == "Wherewithal shall a young man"


def test_osis_web_footnotes_do_not_glue_words():
    assert clean_osis(WEB_GEN_1_1) == "In the beginning, God created the heavens and the earth."
    assert clean_osis(WEB_GEN_11_2_START) == "traveled east, they found"


def test_osis_web_speaker_glossary_and_quotes():
    assert clean_osis(WEB_SONG_1_2_START) == "Let him kiss me"
    assert clean_osis(WEB_REV_22_21) == "all the saints. Amen."
    assert clean_osis(WEB_2KGS_17_27_QUOTE) == 'saying, "Carry there; god of the land."'


# --- pythonbible packages ------------------------------------------------------------------------

def test_pythonbible_darby_marks_and_placeholders():
    assert clean_pythonbible(" And *I* have given to thee one tract [of land] above thy brethren,"
                             ) == "And I have given to thee one tract of land above thy brethren,"
    assert clean_pythonbible("{A Psalm of David, when he fled from Absalom his son.} Jehovah,") == (
        "A Psalm of David, when he fled from Absalom his son. Jehovah,")
    assert clean_pythonbible(" Not available") is None
    assert clean_pythonbible(" ...") is None


def test_pythonbible_ylt_backticks_and_double_spaces():
    ylt_gen_3_1 = (" And the serpent hath been subtile above every beast of the  field which "
                   "Jehovah God hath made, and he saith unto the woman,  `Is it true that God "
                   "hath said, Ye do not eat of every tree of  the garden?`")
    assert clean_pythonbible(ylt_gen_3_1) == (
        "And the serpent hath been subtile above every beast of the field which Jehovah God hath "
        "made, and he saith unto the woman, 'Is it true that God hath said, Ye do not eat of "
        "every tree of the garden?'")


BBE_PS_1_TO_3 = (
    "1. Happy is the man who does not go in the company of sinners, or take his place in the way "
    "of evil-doers, or in the seat of those who do not give honour to the Lord. 2. But whose "
    "delight is in the law of the Lord, and whose mind is on his law day and night. 3. He will be "
    "like a tree planted by the rivers of water, which gives its fruit at the right time, whose "
    "leaves will ever be green; and he will do well in all his undertakings. 4. The evil-doers "
    "are not so; but are like the dust from the grain, which the wind takes away. 5. For this "
    "cause there will be no mercy for sinners when they are judged, and the evil-doers will have "
    "no place among the upright, 6. Because the Lord sees the way of the upright, but the end of "
    "the sinner is destruction. 1. Why are the nations so violently moved, and why are the "
    "thoughts of the people so foolish? 2. The kings of the earth have taken their place, and the "
    "rulers are fixed in their purpose, against the Lord, and against the king of his selection, "
    "saying, 3. Let their chains be broken, and their cords taken from off us. 4. Then he whose "
    "seat is in the heavens will be laughing: the Lord will make sport of them. 5. Then will his "
    "angry words come to their ears, and by his wrath they will be troubled: 6. But I have put "
    "my king on my holy hill of Zion. 7. I will make clear the Lord's decision: he has said to "
    "me, You are my son, this day have I given you being. 8. Make your request to me, and I will "
    "give you the nations for your heritage, and the farthest limits of the earth will be under "
    "your hand. 9. They will be ruled by you with a rod of iron; they will be broken like a "
    "potter's vessel. 10. So now be wise, you kings: take his teaching, you judges of the earth. "
    "11. Give worship to the Lord with fear, kissing his feet and giving him honour, 12. For fear "
    "that he may be angry, causing destruction to come on you, because he is quickly moved to "
    "wrath. Happy are all those who put their faith in him. 1. A Psalm. Of David. When he went in "
    "flight from Absalom his son. 2.\\3:1\\Lord, how greatly are they increased who make attacks "
    "on me! in great numbers they come against me. 3.\\3:2\\Unnumbered are those who say of my "
    "soul, There is no help for him in God. (Selah.) ")


def test_resegment_bbe_markers_are_authoritative_and_titles_fold_into_verse_one():
    slots = resegment_numbered_text(BBE_PS_1_TO_3, [("Ps", [6, 12, 8])])
    assert len(slots) == 6 + 12 + 2
    assert clean_pythonbible(slots[("Ps", 1, 6)]).startswith("Because the Lord sees")
    assert clean_pythonbible(slots[("Ps", 2, 12)]).endswith("put their faith in him.")
    assert clean_pythonbible(slots[("Ps", 3, 1)]) == (
        "A Psalm. Of David. When he went in flight from Absalom his son. Lord, how greatly are "
        "they increased who make attacks on me! in great numbers they come against me.")
    assert clean_pythonbible(slots[("Ps", 3, 2)]).startswith("Unnumbered are those")


def test_resegment_moves_on_to_the_next_book():
    slots = resegment_numbered_text("1. Last verse.1. First verse of the next book.",
                                    [("Obad", [1]), ("Jonah", [17])])
    assert {key: clean_pythonbible(text) for key, text in slots.items()} == {
        ("Obad", 1, 1): "Last verse.", ("Jonah", 1, 1): "First verse of the next book."}


# --- the shift decision rule ---------------------------------------------------------------------

def _scores(best_offsets: list[int | None]) -> np.ndarray:
    """Scores where each verse matches its pivot at the given offset (None: no text)."""
    scores = np.full((len(best_offsets), 2 * MAX_OFFSET + 1), 0.1)
    for i, offset in enumerate(best_offsets):
        if offset is None:
            scores[i] = np.nan
        else:
            scores[i, MAX_OFFSET + offset] = 0.6
    return scores


def test_flag_shifted_flags_the_chapter_tail_from_the_verse_before_the_shift():
    frame = pd.DataFrame({"book": ["Jonah"] * 12,
                          "document": ["Jonah.1"] * 6 + ["Jonah.2"] * 6})
    offsets = [0, 0, 0, 0, 0, None, 0, -1, -1, -1, -1, -1]
    flagged = flag_shifted(_scores(offsets), frame, flag_before_gaps=True)
    # Jonah 1:5 precedes an empty slot; Jonah 2:1 holds a split verse before the shifted tail.
    assert flagged.tolist() == [False] * 4 + [True, False] + [True] * 6


def test_flag_shifted_keeps_isolated_noise_out():
    frame = pd.DataFrame({"book": ["Gen"] * 10, "document": ["Gen.1"] * 10})
    offsets = [0, 0, 0, 2, 0, 0, 0, 0, 0, 0]
    assert not flag_shifted(_scores(offsets), frame).any()


def test_frozen_flags_round_trip(tmp_path):
    frame = pd.DataFrame({"segment_id": [4013001, 4013002], "document": ["Num.13", "Num.13"],
                          "verse": [1, 2]})
    path = tmp_path / "flags.tsv"
    write_flags(path, frame, {4013002})
    assert read_flags(path) == {4013002}
    assert "Num.13.2" in path.read_text()
    with pytest.raises(FileNotFoundError, match="--detect-shifts"):
        read_flags(tmp_path / "missing.tsv")
