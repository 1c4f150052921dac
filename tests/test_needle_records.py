"""An item's needle records kept as columns (`NeedleRecords.from_columns`) are the records validation makes.

The compile hands an item's needles over as one column per field (a CWE item has 300), and the records are made
only when one is read. These tests check that the columns give the same records, rows, JSON and equality as
validating the same values one record at a time, that values are taken as validation takes them (an int depth
as a float, a `str` subclass as its text, a numpy integer as an int), that bad values are refused as validation
refuses them, and that an item with such records survives its JSON line and pickling unchanged.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from needlec.dataset.item import Item, Needle, NeedleRecords
from needlec.util.lines import Lines

RECORDS = TypeAdapter(list[Needle])


def _columns(n: int) -> dict[str, list[Any]]:
    return {
        "ids": [f"n{i}" for i in range(n - 1)] + ["d0"],
        "roles": ["target"] * (n - 1) + ["distractor"],
        "languages": ["en"] * n,
        "texts": [f"word{i % 7}\n" for i in range(n)],
        "target_depths": [round(100 * i / n, 4) for i in range(n)],
        "depths": [round(100 * i / n + 0.25, 4) for i in range(n)],
        "token_offsets": [3 * i for i in range(n)],
        "char_offsets": [11 * i for i in range(n)],
    }


def _validated(columns: dict[str, list[Any]]) -> list[Needle]:
    fields = ("id", "role", "language", "text", "target_depth_percent", "depth_percent", "token_offset", "char_offset")
    return RECORDS.validate_python([dict(zip(fields, row, strict=True)) for row in zip(*columns.values(), strict=True)])


def test_columns_make_the_records_validation_makes() -> None:
    columns = _columns(300)
    records = NeedleRecords.from_columns(**columns)
    validated = _validated(columns)
    assert len(records) == 300
    assert records == validated
    assert list(records) == validated
    assert records[5] == validated[5] and records[-1].role == "distractor"
    assert records.rows() == [needle.model_dump(mode="json") for needle in validated]
    assert [list(row) for row in records.rows()] == [list(needle.model_dump()) for needle in validated]  # key order
    assert records.column("char_offset") == columns["char_offsets"]
    assert NeedleRecords(validated).column("text") == columns["texts"]
    assert records == NeedleRecords(validated)


def test_values_are_taken_as_validation_takes_them() -> None:
    columns = _columns(40)
    columns["target_depths"] = [int(x) for x in columns["target_depths"]]  # an int depth is a float
    columns["token_offsets"] = list(np.arange(40, dtype=np.int64) * 2)  # numpy integers are ints
    columns["texts"] = [Lines("a\nb", ["a", "b"], [1, 1]) for _ in range(40)]  # a `str` subclass is its text
    records = NeedleRecords.from_columns(**columns)
    plain = {**columns, "token_offsets": [2 * i for i in range(40)], "texts": ["a\nb"] * 40}
    assert records.rows() == [needle.model_dump(mode="json") for needle in _validated(plain)]
    assert all(type(text) is str for text in records.column("text"))
    assert all(type(depth) is float for depth in records.column("target_depth_percent"))
    assert all(type(offset) is int for offset in records.column("token_offset"))


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("roles", "winner", ValueError),
        ("ids", 7, ValidationError),
        ("token_offsets", 1.5, ValidationError),
        ("depths", "deep", ValidationError),
    ],
)
def test_bad_values_are_refused(field: str, value: Any, error: type[Exception]) -> None:
    columns = _columns(40)
    columns[field][3] = value
    with pytest.raises(error):
        NeedleRecords.from_columns(**columns)
    with pytest.raises(ValidationError):
        _validated(columns)


def test_values_validation_accepts_are_taken_as_it_takes_them() -> None:
    columns = _columns(40)
    columns["token_offsets"][3] = 6.0  # a whole float
    columns["char_offsets"][4] = "44"  # a numeric string
    columns["ids"][5] = np.str_("n5")  # a str subclass
    columns["depths"][6] = "12.5"
    assert NeedleRecords.from_columns(**columns).rows() == [n.model_dump(mode="json") for n in _validated(columns)]
    assert NeedleRecords.from_columns(**columns).column("char_offset")[4] == 44


def test_only_needle_records_are_held() -> None:
    with pytest.raises(TypeError, match="Needle"):
        NeedleRecords([{"id": "n0"}])  # type: ignore[list-item]


def test_an_item_given_a_plain_list_of_needles_still_serialises_and_checks(small_niah: Any) -> None:
    from needlec.compile.checks import reachable_depths
    from needlec.tokenizer import TiktokenTokenizer

    line = next((small_niah / "data").rglob("*.jsonl")).read_text(encoding="utf-8").splitlines()[0]
    item = Item.model_validate_json(line)
    plain = item.model_copy(update={"needles": list(item.needles)})  # not validated: a list, as a user may set
    assert plain.row() == item.row()
    tokenizer = TiktokenTokenizer("cl100k_base")
    assert reachable_depths(plain, tokenizer) == reachable_depths(item, tokenizer)


def test_columns_of_different_lengths_are_refused() -> None:
    columns = _columns(40)
    columns["char_offsets"].pop()
    with pytest.raises(ValueError, match="different lengths"):
        NeedleRecords.from_columns(**columns)


def test_an_item_with_column_records_survives_its_line_and_pickling(small_niah: Any) -> None:
    line = next((small_niah / "data").rglob("*.jsonl")).read_text(encoding="utf-8").splitlines()[0]
    item = Item.model_validate_json(line)
    records = NeedleRecords.from_columns(**_columns(300))
    built = item.model_copy(update={"needles": records})
    again = Item.model_validate_json(built.model_dump_json())
    assert again == built
    assert isinstance(again.needles, NeedleRecords) and again.needles == records
    assert built.row()["needles"] == records.rows()
    assert pickle.loads(pickle.dumps(built)) == built
    assert Item.model_validate(built.row()).needles == records
    # an exclusion that reaches into the records applies to them as to a list of records
    trimmed = built.model_dump(mode="json", exclude={"needles": {"__all__": {"text"}}})["needles"]
    assert trimmed == [{k: v for k, v in row.items() if k != "text"} for row in records.rows()]
