"""read_image: a saved picture sent to the model, a file that is not a picture refused, HEIC photos,
and the size limits the settings give."""

from __future__ import annotations

import io
import uuid

from PIL import Image

from helpers import ok, settings_for_tests
from webhand import Webhand


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


async def test_read_image_reads_a_heic_photo(tools):
    import pillow_heif

    photo = Image.new("RGB", (640, 480), (200, 40, 40))
    heic = pillow_heif.from_pillow(photo)
    path = tools.files.folder / "photo.heic"
    tools.files.folder.mkdir(parents=True, exist_ok=True)
    heic.save(str(path), quality=80)
    reply = ok(await tools.call("read_image", {"path": str(path)}))
    assert "640x480" in reply
    (image,) = (await tools.call("read_image", {"path": str(path)})).images
    assert image.mime_type == "image/jpeg", "a photo goes to the model as JPEG"
    assert Image.open(io.BytesIO(image.data)).size == (640, 480)


async def test_image_limits_come_from_the_settings(tmp_path_factory):
    async with Webhand(settings_for_tests(tmp_path_factory, image_max_side=200, image_max_pixels=20_000,
                                          warm_reserve=False)) as webhand:
        tools = webhand.conversation(f"images-{uuid.uuid4().hex[:8]}")
        tools.files.folder.mkdir(parents=True, exist_ok=True)
        path = tools.files.folder / "wide.png"
        Image.new("RGB", (800, 400), (0, 90, 200)).save(path)
        reply = await tools.call("read_image", {"path": str(path)})
        assert "sent as 200x100" in ok(reply)
        square = tools.files.folder / "square.png"
        Image.new("RGB", (400, 400), (0, 90, 200)).save(square)
        (image,) = (await tools.call("read_image", {"path": str(square)})).images
        width, height = Image.open(io.BytesIO(image.data)).size
        assert width * height <= 20_000 and width == height
