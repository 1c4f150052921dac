"""Haystack filters: text edits, literal terms, name collisions, spec terms, the stage and its cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from filter_helpers import ANSWER, PLANT_KEY, PLANT_TRAM, filtered, plant, prose, replay, write_spec
from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.errors import SpecError
from needlec.haystacks.filters.edits import EditedText, apply, plan_edits, sentence_spans
from needlec.haystacks.filters.terms import available_terms

# --- pure text helpers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two? Three!", ["One.", "Two?", "Three!"]),
        ("A line\nAnother line.", ["A line", "Another line."]),
        ("“Go,” he said. She went.", ["“Go,” he said.", "She went."]),
        ("我们坐电车去了山上。然后回家了！", ["我们坐电车去了山上。", "然后回家了！"]),
        ("यह पहला वाक्य है। यह दूसरा है।", ["यह पहला वाक्य है।", "यह दूसरा है।"]),
        ("هل ذهبت؟ نعم ذهبت.", ["هل ذهبت؟", "نعم ذهبت."]),
    ],
)
def test_sentences_in_several_scripts(text: str, expected: list[str]) -> None:
    assert [text[s:e] for s, e in sentence_spans(text)] == expected


@pytest.mark.parametrize(
    ("text", "sentence", "expected"),
    [
        ("A b. C d. E f.", "C d.", "A b. E f."),
        ("A b. C d.\nE f.", "C d.", "A b.\nE f."),
        ("A b.\n\nC d.\n\nE f.", "C d.", "A b.\n\nE f."),
        ("A b.\n\nC d.", "C d.", "A b."),
        ("C d. A b.", "C d.", "A b."),
    ],
)
def test_removing_a_sentence_leaves_no_gap(text: str, sentence: str, expected: str) -> None:
    start = text.index(sentence)
    assert apply(text, plan_edits(text, [(start, start + len(sentence))], "remove", "")) == expected


def test_redaction_replaces_only_the_sentence() -> None:
    text = "Keep this. Drop that. Keep too."
    start = text.index("Drop")
    assert apply(text, plan_edits(text, [(start, start + 10)], "redact", "[…]")) == "Keep this. […] Keep too."


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Alpha beta.", "Gamma!", "Delta epsilon?", "Zeta", "\n", "\n\n", " "]), min_size=1, max_size=30
    ),
    st.data(),
)
def test_edits_keep_everything_else_and_map_back(parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    spans = sentence_spans(text)
    chosen = data.draw(st.lists(st.sampled_from(spans), unique=True)) if spans else []
    edits = plan_edits(text, chosen, "remove", "")
    edited = EditedText(text, edits)
    for span in chosen:  # every chosen sentence is inside some edit
        assert any(e.start <= span[0] and span[1] <= e.end for e in edits)
    chosen_chars = {i for s, e in chosen for i in range(s, e)}
    for edit in edits:  # edits only ever swallow whitespace besides the chosen sentences
        assert all(i in chosen_chars or text[i].isspace() for i in range(edit.start, edit.end))
    for position, char in enumerate(edited.text):  # kept characters map back to themselves
        assert text[edited.to_original(position)] == char


# --- literal terms -----------------------------------------------------------------------------


def test_literal_terms_are_unicode_and_case_aware(tmp_path: Path) -> None:
    text = (
        "Die STRASSE war leer. Ein Mann ging nach ＬＩＳＢＯＮ. Trampled grass lay flat.\n"
        "我们坐电车去了山上。然后回家了。\nNothing to see here. The tram came at noon."
    )
    spec = write_spec(tmp_path, text, [{"type": "literal_terms", "terms": ["Straße", "Lisbon", "电车", "tram"]}])
    out, stage = filtered(spec, tmp_path / "cache")
    assert out == "Trampled grass lay flat.\n然后回家了。\nNothing to see here."
    (run,) = stage.runs.values()
    matched = sorted(m["term"] for r in run.audit_records() for reason in r["reasons"] for m in reason["matches"])
    assert matched == ["Lisbon", "Straße", "tram", "电车"]
    assert replay(text, run.audit_records()) == out


def test_literal_case_sensitive_and_regexes(tmp_path: Path) -> None:
    text = "Will you come? Will came. The code is 4821-AB. The code is short."
    spec = write_spec(
        tmp_path,
        text,
        [
            {
                "type": "literal_terms",
                "terms": ["Will"],
                "case_sensitive": True,
                "regexes": [r"\d{4}-[A-Z]{2}"],
                "action": "redact",
            }
        ],
    )
    out, _ = filtered(spec, tmp_path / "cache")
    assert out == "[…] […] […] The code is short."
    spec = write_spec(tmp_path, text, [{"type": "literal_terms", "terms": ["will"], "case_sensitive": True}])
    assert filtered(spec, tmp_path / "cache")[0] == text


def test_terms_from_the_spec(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_TRAM, PLANT_KEY])
    spec = write_spec(tmp_path, text, [{"type": "literal_terms", "from_spec": ["answers", "question"]}])
    out, stage = filtered(spec, tmp_path / "cache")
    assert PLANT_TRAM not in out and PLANT_KEY in out
    (run,) = stage.runs.values()
    assert run.inputs["terms"][0] == ["answers", ANSWER]
    assert replay(text, run.audit_records()) == out


def test_spec_term_groups_skip_random_values() -> None:
    from needlec.compile.plan import load_plan

    plan = load_plan(Path(__file__).resolve().parents[1] / "specs" / "niah.yaml")
    by_name = {c.name: available_terms(c.spec) for c in plan.configs}
    assert by_name["single"]["answers"] == ["yellow tram"]
    assert by_name["passkey"]["answers"] == [] and by_name["passkey"]["needles"] == []
    assert by_name["passkey"]["questions"] == ["What is the access code for the archive vault?"]


def test_an_unknown_group_is_a_located_spec_error(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "Some text here.", [{"type": "literal_terms", "from_spec": ["answres"]}])
    with pytest.raises(SpecError) as info:
        filtered(spec, tmp_path / "cache")
    rendered = info.value.render()
    assert "haystack.sources[0].filters[0]" in rendered and "did you mean 'answers'" in rendered
    assert "spec.json:" in rendered


def test_a_bad_regex_fails_validation(tmp_path: Path) -> None:
    from needlec.compile.plan import load_plan

    spec = write_spec(tmp_path, "Text.", [{"type": "literal_terms", "regexes": ["(unclosed"]}])
    with pytest.raises(SpecError) as info:
        load_plan(spec)
    assert "regexes: regex '(unclosed' does not compile" in info.value.render()


# --- name collisions ---------------------------------------------------------------------------


def test_name_collisions_drop_names_or_sentences(tmp_path: Path) -> None:
    text = prose("Ruth")
    names = ["Naomi", "Zanele", "Boaz", "Ximena", "Orpah"]
    spec = write_spec(tmp_path, text, [{"type": "name_collisions", "names": names}])
    out, stage = filtered(spec, tmp_path / "cache")
    assert out == text
    (run,) = stage.runs.values()
    assert run.result.exclusions == {"names": ["Boaz", "Naomi", "Orpah"]}
    assert stage.exclusions() == {"names": ["Boaz", "Naomi", "Orpah"]}
    spec = write_spec(tmp_path, text, [{"type": "name_collisions", "names": ["Orpah"], "action": "remove_sentences"}])
    out, stage = filtered(spec, tmp_path / "cache")
    assert "Orpah" not in out and "Naomi" in out
    (run,) = stage.runs.values()
    assert replay(text, run.audit_records()) == out


# --- the stage: chaining, cache keys, manifest -------------------------------------------------


def test_filters_chain_and_the_cache_key_tracks_what_matters(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_TRAM, PLANT_KEY])
    chain = [
        {"type": "literal_terms", "terms": ["yellow tram"]},
        {"type": "literal_terms", "terms": ["blue flowerpot"]},
    ]
    spec = write_spec(tmp_path, text, chain)
    out, stage = filtered(spec, tmp_path / "cache")
    assert PLANT_TRAM not in out and PLANT_KEY not in out
    first, second = stage.runs.values()
    assert second.input_sha256 == first.output_sha256
    entries = stage.manifest()
    assert [e["name"] for e in entries] == ["literal_terms", "literal_terms"]
    assert all(e["counts"]["sentences"] == 1 for e in entries)
    keys = [e["cache_key"] for e in entries]
    # a changed parameter changes the key; an operational one would not
    spec = write_spec(tmp_path, text, [{**chain[0], "whole_words": False}, chain[1]])
    _, stage = filtered(spec, tmp_path / "cache")
    assert next(r.cache_key for r in stage.runs.values()) != keys[0]
    _, stage = filtered(write_spec(tmp_path, text, chain), tmp_path / "cache")
    assert [r.cache_key for r in stage.runs.values()] == keys
    assert stage.activity.cached_runs == 2 and stage.activity.fresh_runs == 0


def test_a_damaged_run_cache_is_recomputed(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path, "Keep me. Drop the yellow tram. Keep me too.", [{"type": "literal_terms", "terms": ["yellow tram"]}]
    )
    first, _ = filtered(spec, tmp_path / "cache")
    for path in (tmp_path / "cache" / "filters" / "runs").rglob("*.json"):
        path.write_text("{not json")
    again, stage = filtered(spec, tmp_path / "cache")
    assert again == first == "Keep me. Keep me too." and stage.activity.fresh_runs == 1
    data = json.loads(next((tmp_path / "cache" / "filters" / "runs").rglob("*.json")).read_text())
    assert data["filter"] == "literal_terms"


# --- the registry and the command line ----------------------------------------------------------


def test_every_filter_parameter_is_strict_and_described() -> None:
    from pydantic import BaseModel, ValidationError

    from needlec.haystacks.filters import FILTERS
    from needlec.haystacks.filters.llm import FewShotExample

    models: list[type[BaseModel]] = [c.config for c in FILTERS] + [FewShotExample]
    assert {c.name for c in FILTERS} >= {
        "literal_terms",
        "embedding_distractors",
        "llm_answer_candidates",
        "name_collisions",
    }
    for model in models:
        assert model.model_config.get("extra") == "forbid", model.__name__
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
    with pytest.raises(ValidationError):
        FILTERS.get("literal_terms").config.model_validate({"type": "literal_terms", "term": ["x"]})


def test_filter_command_prints_removals_and_writes_the_audit(tmp_path: Path) -> None:
    import subprocess
    import sys

    needlec = str(Path(sys.executable).parent / "needlec")
    spec = write_spec(
        tmp_path / "spec",
        "Keep me. The yellow tram is here. Keep me too.",
        [{"type": "literal_terms", "from_spec": ["answers"]}],
    )
    args = [needlec, "filter", str(spec), "--cache-dir", str(tmp_path / "cache"), "-q"]
    result = subprocess.run([*args, "--audit", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (
        "literal_terms on files:hay.txt: removed 1 sentence(s) in 1 cut(s) (neighbouring sentences go in one), "
        "25 characters (ran now" in result.stdout
    )
    assert "term 'yellow tram'" in result.stdout and "'The yellow tram is here.'" in result.stdout
    assert (tmp_path / "out" / "audit" / "filters.jsonl").is_file()
    assert (tmp_path / "out" / "audit" / "summary.md").is_file()
    again = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert "(from cache" in again.stdout and "1 from cache, 0 ran now" in again.stdout
    wrong = subprocess.run([*args, "--config", "nope"], capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and "no config named nope (configs: default)" in wrong.stderr
    # with `action: redact` the sentence stays, replaced by the redaction: the report says so
    redacting = write_spec(
        tmp_path / "redact",
        "Keep me. The yellow tram is here. Keep me too.",
        [{"type": "literal_terms", "from_spec": ["answers"], "action": "redact", "redaction": "[cut]"}],
    )
    shown = subprocess.run(
        [needlec, "filter", str(redacting), "--cache-dir", str(tmp_path / "cache"), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert (
        "redacted 1 sentence(s) in 1 cut(s) (neighbouring sentences go in one), "
        "24 characters (each replaced by its redaction)" in shown.stdout
    )  # the sentence
