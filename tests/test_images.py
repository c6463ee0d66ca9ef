"""read_image: a saved picture sent to the model, a file that is not a picture refused, HEIC photos,
and the size limits the settings give."""

from __future__ import annotations


async def test_read_image_shows_a_saved_screenshot_and_refuses_missing_files(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    shot = await tools.call("browser_take_screenshot", {"full_page": True})
    reply = await tools.call("read_image", {"path": shot.images[0].path})
    assert reply.images and "sent as" in reply.text
    missing = await tools.call("read_image", {"path": str(tools.files.screenshots / "nope.png")})
    assert missing.is_error and "No image file" in missing.text
    outside = await tools.call("read_image", {"path": "/etc/hostname"})
    assert outside.is_error and "outside the folders webhand may use" in outside.text


async def test_read_image_refuses_a_file_that_is_not_an_image(tools):
    tools.files.folder.mkdir(parents=True, exist_ok=True)
    text = tools.files.folder / "notes.png"
    text.write_text("just some words, not pixels")
    reply = await tools.call("read_image", {"path": str(text)})
    assert reply.is_error and f"{text} is not an image" in reply.text
    assert "object at 0x" not in reply.text and "BytesIO" not in reply.text
