"""Asking an OpenAI-compatible chat model many short questions, reliably and resumably.

Each verdict is appended to an on-disk cache (one JSON line, flushed and synced) the moment it
arrives, keyed by sha256 of (model, messages, sampling settings); a crash loses nothing that
was answered and a rerun asks only what is missing. Requests run in a bounded thread pool with
a timeout each; 429s (honouring Retry-After), 5xx, timeouts, dropped connections and malformed
replies are retried with exponential backoff. The API key is only ever passed to the client and
is scrubbed from every error message.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from needlec.haystacks.filters.base import FilterError
from needlec.util.canonical import sha256_json

if TYPE_CHECKING:
    from concurrent.futures import Future

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Endpoint:
    """Where to send requests. `api_key` never leaves this object except to the HTTP client."""

    base_url: str
    model: str
    api_key: str = field(repr=False)

    def scrub(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text


@dataclass(frozen=True)
class RetryPolicy:
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 1.0
    max_wait: float = 60.0


def request_key(model: str, messages: Messages, max_tokens: int, temperature: float) -> str:
    return sha256_json({"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": temperature})


class VerdictCache:
    """Append-only JSONL of `{key, answer}`; a torn last line (a crash mid-write) is ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._answers: dict[str, str] = {}
        self._torn: bool | None = None
        if path.exists():
            for line in path.read_bytes().splitlines():
                try:
                    record = orjson.loads(line)
                    self._answers[record["key"]] = record["answer"]
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    continue

    def get(self, key: str) -> str | None:
        return self._answers.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._answers

    def put(self, key: str, answer: str) -> None:
        line = orjson.dumps({"key": key, "answer": answer}) + b"\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._torn is None:
                self._torn = self._last_line_torn()
            with self.path.open("ab") as handle:
                handle.write(b"\n" + line if self._torn else line)  # first close a line torn by a crash
                handle.flush()
                os.fsync(handle.fileno())
            self._torn = False
            self._answers[key] = answer

    def _last_line_torn(self) -> bool:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return False
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"


class Malformed(Exception):
    """The server answered 200 with something that is not a chat completion."""


class Dropped(Exception):
    """The reply's body could not be read to its end (a dropped or cut-off connection)."""


def parse_reply(body: bytes) -> str:
    try:
        data = orjson.loads(body)
        content = data["choices"][0]["message"]["content"]
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise Malformed(f"not a chat completion ({type(exc).__name__}): {body[:120]!r}") from None
    if not isinstance(content, str):
        raise Malformed(f"message content is {type(content).__name__}, not text")
    return content.strip()


def retry_after(headers: Any) -> float | None:
    """Seconds a server asked us to wait (`retry-after-ms`, `retry-after` seconds or date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        import email.utils

        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None  # noqa: TID251  (a Retry-After date is wall-clock time)


class ChatClient:
    """Runs chat requests against one endpoint with bounded concurrency and retries."""

    def __init__(
        self,
        endpoint: Endpoint,
        policy: RetryPolicy,
        max_tokens: int,
        temperature: float,
        concurrency: int,
        log: Callable[[str], None],
    ) -> None:
        import openai

        self.endpoint = endpoint
        self.policy = policy
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.concurrency = concurrency
        self.log = log
        self._client = openai.OpenAI(
            base_url=endpoint.base_url, api_key=endpoint.api_key or "none", timeout=policy.timeout, max_retries=0
        )
        self._jitter = random.Random()

    def _once(self, messages: Messages) -> str:
        raw = self._client.chat.completions.with_raw_response.create(
            model=self.endpoint.model,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        try:
            body = raw.http_response.read()
        except Exception as exc:  # the HTTP transport's own error types
            raise Dropped(f"{type(exc).__name__}: {exc}") from None
        return parse_reply(body)

    def ask(self, messages: Messages) -> str:
        import openai

        failure = ""
        for attempt in range(self.policy.retries + 1):
            try:
                return self._once(messages)
            except openai.APIStatusError as exc:
                status = exc.status_code
                failure = f"HTTP {status}: {self.endpoint.scrub(str(exc.message))[:200]}"
                if status not in (408, 409, 429) and status < 500:
                    raise FilterError(f"the model server refused the request: {failure}") from None
                wait_s = retry_after(exc.response.headers) if status == 429 else None
            except (openai.APITimeoutError, openai.APIConnectionError, Dropped) as exc:
                failure = f"{type(exc).__name__}: {self.endpoint.scrub(str(exc))[:200]}"
                wait_s = None
            except Malformed as exc:
                failure = f"malformed reply: {self.endpoint.scrub(str(exc))}"
                wait_s = None
            if attempt == self.policy.retries:
                break
            if wait_s is None:
                wait_s = self.policy.backoff * 2**attempt * (1 + 0.25 * self._jitter.random())
            wait_s = min(wait_s, self.policy.max_wait)
            self.log(f"llm_answer_candidates: {failure}; retrying in {wait_s:.1f}s")
            time.sleep(wait_s)
        raise FilterError(
            f"the model server at {self.endpoint.base_url} failed "
            f"{self.policy.retries + 1} time(s); last error: {failure}"
        )

    def ask_all(self, requests: dict[str, Messages], cache: VerdictCache, on_answer: Callable[[], None]) -> None:
        """Ask every request whose key is not cached; each answer is cached as it arrives.

        On the first request that fails for good, the rest are cancelled and the error is
        raised; everything answered before it stays in the cache.
        """
        todo = [(k, m) for k, m in requests.items() if k not in cache]
        if not todo:
            return

        def one(key: str, messages: Messages) -> None:
            answer = self.ask(messages)
            cache.put(key, answer)
            on_answer()

        from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        futures: list[Future[None]] = [pool.submit(one, k, m) for k, m in todo]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                error = future.exception()
                if error is not None:
                    raise error
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def chat_cache_path(root: Path, model: str) -> Path:
    return root / f"{hashlib.sha256(model.encode()).hexdigest()[:24]}.jsonl"
