"""Uploads (file chooser and input), downloads (link and navigation), PDF, and the file-root rule."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import quote

import pytest

from helpers import ok, ref_of
from webhand.response import page_line


@pytest.fixture
def upload_dir(webhand) -> Path:
    """A folder inside the root the user shared, with two small text files."""
    folder = webhand.settings.roots[0] / "to-upload"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("hello notes\n")
    (folder / "photo.txt").write_text("pretend photo\n")
    return folder


async def _page_says(tools, *, changed: bool = True) -> str:
    # The page reads the files with `await file.text()`: on a loaded machine that can end after the
    # upload's reply (its DOM-quiet window is 25 ms), so wait for the page to say something new.
    if changed:
        waited = await tools.call("browser_wait_for", {"text_gone": "no files", "timeout": 10})
        assert not waited.is_error, waited.text
    reply = await tools.call("browser_eval", {"expression": "document.getElementById('out').textContent"})
    assert not reply.is_error, reply.text
    return reply.text


async def test_upload_through_a_file_chooser(tools, site, upload_dir):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/upload.html")})
    clicked = await tools.call("browser_click", {"selector": "#pick"})
    assert "A file chooser opened in tab 0" in clicked.text and "browser_upload_file" in clicked.text

    uploaded = await tools.call("browser_upload_file", {"paths": [str(upload_dir / "photo.txt")]})
    assert not uploaded.is_error, uploaded.text
    assert "Uploaded 1 file (photo.txt)" in uploaded.text
    assert "hidden-input:photo.txt=pretend photo" in await _page_says(tools)


async def test_upload_into_an_input_by_selector(tools, site, upload_dir):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/upload.html")})
    uploaded = await tools.call("browser_upload_file", {
        "selector": "#files", "paths": [str(upload_dir / "notes.txt"), str(upload_dir / "photo.txt")]})
    assert not uploaded.is_error, uploaded.text
    said = await _page_says(tools)
    assert "files:notes.txt=hello notes" in said and "files:photo.txt=pretend photo" in said


async def test_upload_without_a_chooser_or_target_says_what_to_do(tools, site, upload_dir):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/upload.html")})
    reply = await tools.call("browser_upload_file", {"paths": [str(upload_dir / "notes.txt")]})
    assert reply.is_error and "No file chooser is open" in reply.text and "<input type=file>" in reply.text


async def test_a_path_outside_the_roots_is_refused(tools, site, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the page")
    await tools.call("browser_navigate", {"url": site.url("tabs_files/upload.html")})
    reply = await tools.call("browser_upload_file", {"selector": "#files", "paths": [str(outside)]})
    assert reply.is_error
    assert "outside the folders webhand may use" in reply.text and "roots" in reply.text
    assert "no files" in await _page_says(tools, changed=False)

    pdf = await tools.call("browser_pdf", {"path": str(tmp_path / "page.pdf")})
    assert pdf.is_error and "outside the folders webhand may use" in pdf.text
    assert not (tmp_path / "page.pdf").exists()


def _saved(reply_text: str, name: str) -> Path:
    match = re.search(rf"Downloaded {re.escape(name)} \(([\d,]+) bytes\) to (.+)$", reply_text, re.M)
    assert match, reply_text
    path = Path(match.group(2))
    assert path.is_file() and path.stat().st_size == int(match.group(1).replace(",", ""))
    return path


async def test_a_download_by_link_is_saved_and_reported(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download.html")})
    clicked = await tools.call("browser_click", {"selector": "#report"})
    assert not clicked.is_error, clicked.text
    path = _saved(clicked.text, "report.txt")
    assert path.read_text() == "content of report.txt\n"
    assert path.parent == tools.files.downloads

    listed = await tools.call("browser_downloads", {})
    assert f"report.txt: {path}" in listed.text


async def test_a_download_links_late_download_is_waited_for_and_reported_by_the_click(tools, site):
    """A link with a download attribute downloads without a navigation: no request the page's
    network events show, and the browser tells of the download only once the server answered
    (here after 1.5 s, past the click's settle). The click's reply waits for it (seen in the page:
    the link was followed, its default not prevented) instead of saying nothing is pending."""
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download_links.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    clicked = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'link "Download the late report"')}))
    assert _saved(clicked, "late.csv").read_text() == "content of late.csv\n"
    assert "which started a download" in clicked and "nothing it started is still pending" not in clicked, clicked


async def test_an_export_whose_link_is_never_in_the_document_is_a_download_the_click_started(tools, site):
    """An app's export makes a link it never adds to the document and clicks it (``a.click()``, or
    FileSaver's dispatched click): the click never reaches the window, and is heard on the link."""
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download_links.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    for button, name in (("Export CSV", "export.csv"), ("Save with FileSaver", "saved.csv")):
        clicked = ok(await tools.call("browser_click", {"ref": ref_of(shot, f'button "{button}"')}))
        assert _saved(clicked, name).read_text() == "a,b\n1,2\n"
        assert "which started a download" in clicked, clicked


@pytest.mark.one_driver("the capped wait for a followed download link's download and its words are the session's")
async def test_a_download_link_whose_download_has_not_begun_at_the_cap_is_said_so(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download_links.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    clicked = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'link "Download the hung report"')}))
    assert "it followed a download link whose download had not begun 5 s later (browser_downloads lists it once it does)" \
        in clicked and "nothing it started is still pending" not in clicked, clicked


async def test_a_download_link_whose_click_the_page_prevents_is_not_waited_for(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download_links.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    clicked = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'link "Download nothing (the page keeps it)"')}))
    assert "No change seen after the click, and nothing it started is still pending." in clicked, clicked
    assert "download" not in clicked.replace("Download nothing", ""), clicked
    assert "No downloads yet" in (await tools.call("browser_downloads", {})).text


async def test_a_download_by_navigation_is_saved_and_reported(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    reply = await tools.call("browser_navigate", {"url": site.url("download/by-navigation.csv")})
    assert not reply.is_error, reply.text
    assert _saved(reply.text, "by-navigation.csv").read_text() == "content of by-navigation.csv\n"
    assert "is a file download, not a page; the tab stays at" in reply.text and "Opened" not in reply.text
    assert "Child page" in (await tools.call("browser_snapshot", {})).text  # the page stayed


async def test_a_second_download_of_the_same_name_does_not_overwrite(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/download.html")})
    first = _saved((await tools.call("browser_click", {"selector": "#report"})).text, "report.txt")
    second = _saved((await tools.call("browser_click", {"selector": "#report"})).text, "report.txt")
    assert first != second and first.exists() and second.exists()


async def test_pdf_of_the_page(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    reply = await tools.call("browser_pdf", {})
    assert not reply.is_error, reply.text
    match = re.search(r"as PDF: (\S+) \(([\d,]+) bytes\)", reply.text)
    assert match, reply.text
    path = Path(match.group(1))
    assert path.read_bytes().startswith(b"%PDF-")
    assert path.stat().st_size == int(match.group(2).replace(",", ""))
    assert path.is_relative_to(tools.files.folder)


async def test_every_file_webhand_writes_is_owner_only_whatever_the_umask(tools, site):
    """With the usual umask (0o022, which leaves files readable by everyone), a screenshot, a
    download (saved by the browser itself), a PDF and a HAR: every folder under the conversation's
    is 0700, every file 0600."""
    previous = os.umask(0o022)
    try:
        ok(await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")}))
        ok(await tools.call("browser_take_screenshot", {}))
        _saved(ok(await tools.call("browser_navigate", {"url": site.url("download/umask.txt")})), "umask.txt")
        ok(await tools.call("browser_pdf", {}))
        ok(await tools.call("browser_network_requests", {"har": True}))
    finally:
        os.umask(previous)
    kinds, wrong = set(), []
    for folder, subfolders, files in os.walk(tools.files.folder):
        for name, wanted in [(n, 0o700) for n in subfolders] + [(n, 0o600) for n in files]:
            path = Path(folder, name)
            kinds.add(path.suffix or path.name)
            if stat.S_IMODE(path.lstat().st_mode) != wanted:
                wrong.append(f"{oct(stat.S_IMODE(path.lstat().st_mode))} {path.relative_to(tools.files.folder)}")
    assert not wrong, wrong
    assert {"screenshots", "downloads", "pdf", ".png", ".txt", ".pdf", ".har"} <= kinds, kinds


async def test_a_download_name_longer_than_the_file_system_takes_is_cut_keeping_its_extension(tools, site):
    """A 400-character name (600 bytes in UTF-8) is cut to what the folder takes, whole characters,
    its extension kept; the second download of it is numbered within the limit."""
    long_name = "é" * 200 + "x" * 196 + ".txt"
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    saved = [_saved(ok(await tools.call("browser_navigate", {"url": site.url("download/" + quote(long_name))})),
                    page_line(long_name)) for _ in range(2)]
    limit = os.pathconf(tools.files.downloads, "PC_NAME_MAX")
    assert limit < 600  # 255 on the usual file systems
    assert saved[0].name == "é" * ((limit - len(".txt")) // 2) + ".txt"  # a 2-byte character is never cut in half
    assert saved[1].name == "é" * ((limit - len("-2.txt")) // 2) + "-2.txt"
    assert saved[1].read_text() == f"content of {long_name}\n"
