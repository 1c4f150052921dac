"""A stand-in for the Hugging Face Hub's HTTP API on 127.0.0.1, for publish and download round trips.

The Hub itself cannot be reached from the test machines, so this serves the few endpoints that
`huggingface_hub` calls to create a dataset repository, commit files to it (every file sent inline,
as the Hub asks for small files) and download them again (repository info, file tree, file metadata
and content), keeping repositories in memory. The real `huggingface_hub` client talks to it over
HTTP, pointed there by `HF_ENDPOINT`; nothing on the client side is replaced.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse


@dataclass
class Repo:
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)
    private: bool = False

    @property
    def head(self) -> str:
        return self.commits[-1] if self.commits else "0" * 40


@dataclass
class Hub:
    repos: dict[str, Repo] = field(default_factory=dict)
    tokens_seen: set[str] = field(default_factory=set)
    url: str = ""


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id, as the Hub reports


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(
            self, status: int, body: Any = None, headers: dict[str, str] | None = None, raw: bool = False
        ) -> None:
            data = body if raw else json.dumps(body if body is not None else {}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream" if raw else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _missing(self, repo_id: str) -> None:
            self._send(404, {"error": f"Repository {repo_id} not found"}, {"X-Error-Code": "RepoNotFound"})

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _token(self) -> None:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                hub.tokens_seen.add(auth[len("Bearer ") :])

        def _repo(self, parts: list[str]) -> tuple[str, Repo | None]:
            repo_id = "/".join(parts[:2])
            return repo_id, hub.repos.get(repo_id)

        def do_POST(self) -> None:
            self._token()
            path = unquote(urlparse(self.path).path)
            body = self._body()
            if path == "/api/repos/create":
                request = json.loads(body)
                repo_id = f"{request.get('organization') or 'user'}/{request['name']}"
                if repo_id in hub.repos:
                    return self._send(409, {"error": "You already created this dataset repo", "url": ""})
                hub.repos[repo_id] = Repo(private=bool(request.get("private")))
                return self._send(200, {"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id})
            if path == "/api/validate-yaml":
                return self._send(200, {"warnings": []})
            parts = path.removeprefix("/api/datasets/").split("/")
            repo_id, repo = self._repo(parts)
            if repo is None:
                return self._missing(repo_id)
            if parts[2] == "preupload":
                files = json.loads(body)["files"]
                return self._send(
                    200,
                    {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
                )
            if parts[2] == "commit":
                for line in body.splitlines():
                    op = json.loads(line)
                    if op["key"] == "file":
                        repo.files[op["value"]["path"]] = base64.b64decode(op["value"]["content"])
                    elif op["key"] == "deletedFile":
                        repo.files.pop(op["value"]["path"], None)
                    elif op["key"] != "header":
                        return self._send(400, {"error": f"the stand-in does not take {op['key']} operations"})
                digest = hashlib.sha1(repo.head.encode())
                for name in sorted(repo.files):
                    digest.update(name.encode() + _blob_id(repo.files[name]).encode())
                repo.commits.append(digest.hexdigest())
                return self._send(
                    200,
                    {
                        "commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{repo.head}",
                        "commitOid": repo.head,
                        "pullRequestUrl": None,
                    },
                )
            return self._send(404, {"error": f"no such endpoint: POST {path}"})

        def do_GET(self) -> None:
            self._token()
            path = unquote(urlparse(self.path).path)
            if path.startswith("/api/datasets/"):
                parts = path.removeprefix("/api/datasets/").split("/")
                repo_id, repo = self._repo(parts)
                if repo is None:
                    return self._send(
                        404, {"error": f"Repository {repo_id} not found"}, {"X-Error-Code": "RepoNotFound"}
                    )
                if parts[2] == "revision":
                    return self._send(
                        200,
                        {
                            "id": repo_id,
                            "sha": repo.head,
                            "private": repo.private,
                            "siblings": [{"rfilename": name} for name in sorted(repo.files)],
                        },
                    )
                if parts[2] == "tree":
                    entries = [
                        {"type": "file", "path": name, "size": len(data), "oid": _blob_id(data)}
                        for name, data in sorted(repo.files.items())
                    ]
                    return self._send(200, entries)
                return self._send(404, {"error": f"no such endpoint: GET {path}"})
            if path.startswith("/datasets/") and "/resolve/" in path:
                head, _, rest = path.removeprefix("/datasets/").partition("/resolve/")
                repo = hub.repos.get(head)
                _, _, name = rest.partition("/")
                if repo is None or name not in repo.files:
                    return self._send(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
                data = repo.files[name]
                headers = {"X-Repo-Commit": repo.head, "ETag": f'"{_blob_id(data)}"'}
                return self._send(200, data, headers, raw=True)
            return self._send(404, {"error": f"no such endpoint: GET {path}"})

        do_HEAD = do_GET

    return Handler


@contextmanager
def serve_hub() -> Iterator[Hub]:
    """A Hub stand-in on a free port of 127.0.0.1 for the length of the block."""
    hub = Hub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
