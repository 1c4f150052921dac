"""MLNeedle's online passage sources (MLQA's SQuAD JSON, mMARCO's TSV) through the `url` source.

A real HTTP server on 127.0.0.1 serves small files written here by hand in those layouts (and a
zip archive holding the SQuAD file, as MLQA is published). The expected documents are listed by
hand; a compile over both sources checks that every distractor passage shown is one of them.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.errors import SourceError
from needlec.haystacks.sources import SourceContext
from needlec.haystacks.sources.url import UrlSource, load_url

CONTEXTS = [
    "Die Stadtbibliothek öffnet im Sommer schon um sieben Uhr. Viele Studenten lernen dort am Morgen, "
    "bevor die Hörsäle voll werden.",
    "Der Fluss trat im Frühjahr über die Ufer. Die Bauern mussten ihre Felder erst im Mai bestellen, "
    "als das Wasser endlich zurückgegangen war.",
    "Im alten Rathaus hängt eine Uhr mit zwei Zifferblättern. Sie wurde vor langer Zeit von einem "
    "Schmied aus dem Nachbardorf gebaut.",
]
PASSAGES = [
    "Ein Sauerteigbrot braucht viel Zeit. Der Teig ruht über Nacht in einer kühlen Küche und wird am "
    "nächsten Morgen gebacken.",
    "Die Straßenbahn fährt nachts nur jede halbe Stunde. Wer den letzten Wagen verpasst, geht meistens "
    "zu Fuß nach Hause.",
    "Auf dem Wochenmarkt verkaufen die Bauern Äpfel, Käse und frische Eier. Am Samstag ist der Markt am vollsten.",
    "Der Chor probt jeden Donnerstag im Gemeindesaal. Neue Sänger sind willkommen, auch wenn sie keine "
    "Noten lesen können.",
]


def squad_bytes() -> bytes:
    """An MLQA-like file: two articles, the first context asked about twice (one document)."""
    qa = {"id": "q", "question": "Wann?", "answers": [{"text": "sieben Uhr", "answer_start": 40}]}
    data = {
        "version": "1.0",
        "data": [
            {
                "title": "Bibliothek",
                "paragraphs": [
                    {"context": CONTEXTS[0], "qas": [qa]},
                    {"context": CONTEXTS[1], "qas": [qa]},
                ],
            },
            {
                "title": "Rathaus",
                "paragraphs": [{"context": CONTEXTS[2], "qas": [qa]}, {"context": CONTEXTS[0], "qas": [qa]}],
            },
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=1).encode()


def tsv_bytes() -> bytes:
    """An mMARCO-like collection: passage id, a tab, the passage; a blank line in the middle."""
    lines = [f"{i}\t{p}" for i, p in enumerate(PASSAGES)]
    return ("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n").encode()


def zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("MLQA_V1/test/test-context-de-question-de.json", squad_bytes())
        archive.writestr("MLQA_V1/README.txt", b"readme")
    return buffer.getvalue()


FILES = {
    "/mlqa-de.json": squad_bytes(),
    "/MLQA_V1.zip": zip_bytes(),
    "/de_collection.tsv": tsv_bytes(),
    "/list.json": b'[{"context": "a list, not SQuAD"}]',
}


def sha(path: str) -> str:
    return hashlib.sha256(FILES[path]).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = FILES.get(self.path)
        self.send_response(200 if body is not None else 404)
        payload = body if body is not None else b"missing"
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def load(tmp_path: Path, **fields: Any) -> list[str]:
    config = UrlSource.model_validate({"type": "url", **fields})
    source = load_url(config, SourceContext(spec_dir=tmp_path, cache_dir=tmp_path / "cache"))
    return [d.text for d in source.documents]


def test_squad_contexts_are_documents_once_each(server: str, tmp_path: Path) -> None:
    texts = load(tmp_path, url=f"{server}/mlqa-de.json", sha256=sha("/mlqa-de.json"), format="squad")
    assert texts == CONTEXTS  # the repeated first context is kept once


def test_squad_from_a_zip_member(server: str, tmp_path: Path) -> None:
    member = "MLQA_V1/test/test-context-de-question-de.json"
    url = f"{server}/MLQA_V1.zip"
    texts = load(tmp_path, url=url, sha256=sha("/MLQA_V1.zip"), format="squad", member=member, max_records=2)
    assert texts == CONTEXTS[:2]
    with pytest.raises(SourceError, match=r"no member 'MLQA_V1/dev/x\.json'.*test-context-de-question-de\.json"):
        load(tmp_path, url=url, sha256=sha("/MLQA_V1.zip"), format="squad", member="MLQA_V1/dev/x.json")


def test_tsv_passages(server: str, tmp_path: Path) -> None:
    url = f"{server}/de_collection.tsv"
    assert load(tmp_path, url=url, sha256=sha("/de_collection.tsv"), format="tsv") == PASSAGES
    assert load(tmp_path, url=url, sha256=sha("/de_collection.tsv"), format="tsv", column=0, max_records=3) == [
        "0",
        "1",
        "2",
    ]
    with pytest.raises(SourceError, match=r"de_collection.tsv:1: 2 tab-separated field\(s\), no column 5"):
        load(tmp_path, url=url, sha256=sha("/de_collection.tsv"), format="tsv", column=5)


def test_not_squad_is_a_source_error(server: str, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="expected SQuAD format"):
        load(tmp_path, url=f"{server}/list.json", sha256=sha("/list.json"), format="squad")
    with pytest.raises(SourceError, match=r"de_collection.tsv: not valid JSON"):
        load(tmp_path, url=f"{server}/de_collection.tsv", sha256=sha("/de_collection.tsv"), format="squad")


SPEC = """\
name: online
title: Online passages
seed: 3
languages: [en, ar, de, es, hi, vi, zh]
item_languages: {{needle: en, haystack: de, question: en}}
tokenizers: [o200k_base]
haystack:
  sources:
    - {{type: url, url: "{server}/MLQA_V1.zip", sha256: {zip}, format: squad,
       member: MLQA_V1/test/test-context-de-question-de.json}}
    - {{type: url, url: "{server}/de_collection.tsv", sha256: {tsv}, format: tsv}}
  builder: {{type: passages, count: 1, passage_tokens: 120, min_passage_tokens: 10, target_tokens: 200,
            tokenizer: o200k_base}}
grid: {{lengths: [300], depths: [0, 100], repeats: 1}}
needle: {{type: mlneedle, items: [ml001]}}
placement: {{depth_tolerance: 100}}
prompt:
  user: |-
    {{{{ context }}}}

    Question: {{{{ question }}}}
length: {{counted: context, tolerance: 0}}
scoring: {{metric: contains}}
"""


def test_compile_over_both_online_sources(server: str, tmp_path: Path) -> None:
    spec = tmp_path / "online.yaml"
    spec.write_text(SPEC.format(server=server, zip=sha("/MLQA_V1.zip"), tsv=sha("/de_collection.tsv")))
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    rows = [json.loads(line) for f in (out / "data").rglob("*.jsonl") for line in f.open(encoding="utf-8")]
    assert len(rows) == 2
    known = set(CONTEXTS + PASSAGES)
    for row in rows:
        span = row["context_span"]
        body = row["messages"][span["message"]]["content"][span["start"] : span["end"]]
        shown = [m.group(1) for m in re.finditer(r"^\[\d+\] (.*)$", body, re.M)]
        others = [t for t in shown if t != row["needles"][0]["text"]]
        assert others and set(others) <= known
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    names = {s["name"] for s in manifest["sources"]}
    assert names == {
        f"url:{server}/MLQA_V1.zip!MLQA_V1/test/test-context-de-question-de.json",
        f"url:{server}/de_collection.tsv",
    }
