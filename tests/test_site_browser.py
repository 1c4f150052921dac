"""The built site in a real browser: headless Chromium, driven by Selenium, over a local HTTP server.

`.ci/run` installs Debian's `chromium` and `chromium-driver`. Where they are missing the tests are
skipped, except under CI (`CI` set), where that is a failure. Screenshots of the home page and a
benchmark page are saved under test-artifacts/.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from site_support import ROOT, SPECS, built_site

ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--window-size=1280,2000",
]
WAIT = 30


def _binaries() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The built site on 127.0.0.1, on a free port, for the duration of the module."""
    _, result = built_site(tmp_path_factory)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(result.output)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    binaries = _binaries()
    if binaries is None:
        if os.environ.get("CI"):
            pytest.fail("chromium and chromedriver are required in CI (installed by .ci/run)")
        pytest.skip("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binaries[0]
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=binaries[1]))
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def _specs() -> list[tuple[str, str]]:
    return [(d["name"], d["title"]) for d in (yaml.safe_load(s.read_text(encoding="utf-8")) for s in SPECS)]


def _wait(driver: Any, condition: Any) -> Any:
    """Wait for `condition`, asking again when the page redrew an element it was reading.

    The search box redraws its result list on every keystroke and as its index loads, so an element found
    a moment ago can be gone by the time its text is read; that is the page working, not a failure.
    """
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def _screenshot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    assert driver.save_screenshot(str(path)), f"no screenshot written to {path}"
    return path


def test_home_page_catalogue_lists_every_shipped_spec(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{server}/")
    cards = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".needlec-catalogue li"))
    texts = [card.text for card in cards]
    links = {a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".needlec-catalogue a")}
    for name, title in _specs():
        assert any(title in text and name in text for text in texts), f"no card for {name}: {texts}"
        assert f"{server}/generated/benchmarks/{name}/" in links
    assert len(cards) == len(SPECS)
    assert _screenshot(browser, "site-home.png").stat().st_size > 10_000


def test_search_finds_each_benchmark_by_name(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    for name, title in _specs():
        browser.get(f"{server}/")
        _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "label.md-search__icon, .md-search__input"))
        box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
        browser.execute_script("arguments[0].focus(); arguments[0].click();", box)
        box.send_keys(name)

        def results(driver: Any, expected: str = title) -> list[str] | None:
            items = driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
            hits = [i for i in items if expected in i.text]
            links = [a.get_attribute("href") for hit in hits for a in hit.find_elements(By.CSS_SELECTOR, "a")]
            return links or None

        hrefs = _wait(browser, results)
        assert any(f"/generated/benchmarks/{name}/" in h for h in hrefs), hrefs


def test_benchmark_page_shows_plots_and_sample_items(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    name = "niah" if any(n == "niah" for n, _ in _specs()) else _specs()[0][0]
    browser.get(f"{server}/generated/benchmarks/{name}/")
    plots = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "img.needlec-plot"))
    assert len(plots) == 2
    for plot in plots:
        browser.execute_script("arguments[0].scrollIntoView();", plot)
        _wait(
            browser,
            lambda d, p=plot: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 200", p),
        )
        assert plot.get_attribute("src").endswith(".svg")
    samples = browser.find_elements(By.CSS_SELECTOR, "details.needlec-sample")
    assert len(samples) >= 1
    first = samples[0]
    needle = first.find_element(By.CSS_SELECTOR, "mark.needlec-needle")
    assert not needle.is_displayed()  # the context starts collapsed
    summary = first.find_element(By.TAG_NAME, "summary")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", summary)
    summary.click()
    _wait(browser, lambda d: needle.is_displayed())
    assert len(needle.text) > 10
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", needle)
    assert _screenshot(browser, f"site-benchmark-{name}-sample.png").stat().st_size > 10_000
    browser.execute_script("arguments[0].scrollIntoView();", plots[0])
    assert _screenshot(browser, f"site-benchmark-{name}-plots.png").stat().st_size > 10_000
    browser.execute_script("window.scrollTo(0, 0);")
    assert _screenshot(browser, f"site-benchmark-{name}.png").stat().st_size > 10_000
