"""`answer_candidates`: the offline answer-candidate stage, on real prose with the offline embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from filter_helpers import PLANT_TRAM, QUESTION, filtered, plant, prose, replay, write_spec

from needlec.errors import NeedlecError
from needlec.haystacks.filters.candidates import cue_stems, cues_found, topic


def test_topic_and_cues_by_hand() -> None:
    assert topic("Which character should avoid eating a croissant?") == "avoid eating croissant"
    assert topic("Which character has been to Kuala Lumpur?") == "Kuala Lumpur"
    # Porter stems, frame words and words of two letters left out; matched as word prefixes
    assert cue_stems(["Which character was in Hungary?"]) == ["hungari"]
    assert cue_stems(["avoid eating", "eats"]) == ["avoid", "eat"]
    assert cues_found(["hungari", "eat", "avoid"], "Two Hungarian cooks ate; nobody avoided them.") == [
        "hungari",
        "avoid",
    ]


def test_the_planted_answer_is_flagged_and_removed(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_TRAM])
    params = {"type": "answer_candidates", "from_spec": ["questions"], "top_k": 1}
    spec = write_spec(tmp_path / "spec", text, [params])
    out, stage = filtered(spec, tmp_path / "cache")
    (run,) = stage.runs.values()
    (flag,) = run.result.review
    assert flag["question"] == QUESTION and PLANT_TRAM in flag["chunk"]
    assert flag["decision"] == "remove"  # nobody reviewed it: `undecided: remove` is the safe side
    assert "afternoon" in flag["cues"] and flag["end"] - flag["start"] == 1000
    assert PLANT_TRAM not in out and replay(text, run.audit_records()) == out
    assert run.result.counts == {
        "chunks": run.result.counts["chunks"],
        "flagged": 1,
        "questions": 1,
        "removed_chunks": 1,
        "reviewed": 0,
        "decisions": 0,
    }


def test_reviewed_decisions_apply_without_a_model(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_TRAM])
    folder = tmp_path / "spec"
    ranked = {"type": "answer_candidates", "top_k": 2}
    _, stage = filtered(write_spec(folder, text, [ranked]), tmp_path / "cache")
    entries = [{"filter": "answer_candidates", **e} for e in stage.review()]
    planted = next(e for e in entries if PLANT_TRAM in e["chunk"])
    other = next(e for e in entries if e is not planted)
    planted["quotes"] = ["the best thing to do was to ride the yellow tram"]  # only its sentence goes
    other["decision"] = "keep"
    (folder / "review.yaml").write_text(yaml.safe_dump({"entries": entries}), encoding="utf-8")

    applied = {"type": "answer_candidates", "rank": False, "decisions": "review.yaml"}
    out, stage = filtered(write_spec(folder, text, [applied]), tmp_path / "cache2")
    (run,) = stage.runs.values()
    assert stage.activity.texts_encoded == 0  # no model was needed
    assert [r["removed"].strip() for r in run.audit_records()] == [PLANT_TRAM]
    assert run.result.counts["removed_chunks"] == 1 and run.result.counts["reviewed"] == 1
    assert len(out) == len(text) - len(PLANT_TRAM) - 1  # the sentence and its separating space, nothing else

    # quoted sentences are found wherever they now are: the decision survives text moving
    shifted = "\n" + text  # every chunk now starts one character later
    out, stage = filtered(write_spec(folder, shifted, [applied]), tmp_path / "cache3")
    assert PLANT_TRAM not in out and len(out) == len(shifted) - len(PLANT_TRAM) - 1
    # a decision without quotes names its chunk by offsets and text: on other text it is refused
    del planted["quotes"]
    (folder / "review.yaml").write_text(yaml.safe_dump({"entries": entries}), encoding="utf-8")
    filtered(write_spec(folder, text, [applied]), tmp_path / "cache4")  # the text it was made on: fine
    with pytest.raises(NeedlecError, match="no longer the text it was reviewed on"):
        filtered(write_spec(folder, shifted, [applied]), tmp_path / "cache5")


def test_rank_false_needs_decisions(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec", prose("Ruth"), [{"type": "answer_candidates", "rank": False}])
    with pytest.raises(NeedlecError) as info:
        filtered(spec, tmp_path / "cache")
    shown = info.value.render()
    assert "`decisions` is required" in shown and "haystack.sources[0].filters[0]" in shown


def test_decision_paths_fall_back_to_the_extended_spec(tmp_path: Path) -> None:
    from needlec.haystacks.filters.base import Activity, FilterContext

    base, child = tmp_path / "base", tmp_path / "child"
    (base / "reviews").mkdir(parents=True)
    (base / "reviews" / "d.yaml").write_text("remove: []\n", encoding="utf-8")
    child.mkdir()
    ctx = FilterContext(
        spec=None,  # type: ignore[arg-type]  # resolve() does not read the spec
        spec_dir=child,
        cache_dir=tmp_path,
        source="s",
        activity=Activity(),
        extended_dirs=(base,),
    )
    assert ctx.resolve("reviews/d.yaml") == base / "reviews" / "d.yaml"  # shipped beside the parent
    (child / "reviews").mkdir()
    (child / "reviews" / "d.yaml").write_text("remove: []\n", encoding="utf-8")
    assert ctx.resolve("reviews/d.yaml") == child / "reviews" / "d.yaml"  # the child's own wins
    assert ctx.resolve("missing.yaml") == child / "missing.yaml"  # errors name the child's path
