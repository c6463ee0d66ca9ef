"""Reading an image file from disk, for models that should see it."""

from __future__ import annotations

from pydantic import Field

from webhand.config import Settings
from webhand.durations import Timeout
from webhand.images.fitting import read_for_model
from webhand.response import Response
from webhand.tools.definition import ToolArgs, tool


class ReadImageArgs(ToolArgs):
    path: str = Field(description="Path of a PNG, JPEG, GIF, WebP or HEIC file: in your own folder or a folder the user shared.")
    timeout: Timeout = None


@tool("read_image", capability="files", read_only=True)
async def read_image(settings: Settings, args: ReadImageArgs, response: Response) -> None:
    """Show an image file from disk (e.g. a saved screenshot), downscaled for you."""
    path = response.files.confine(args.path)
    image = read_for_model(path, max_side=settings.image_max_side, max_pixels=settings.image_max_pixels)
    response.attach_image(image, str(path))
    scaled = f", sent as {image.width}x{image.height}" if image.width != image.original_width else ""
    response.add(f"Image {path} ({image.original_width}x{image.original_height}{scaled}).")
