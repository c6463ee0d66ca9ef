"""Images for a model: downscaled to at most 1568 px a side and 1.15 megapixels.

Those are the sizes vision models take without resizing on their side, so a larger image only
costs tokens and latency.
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from webhand.errors import FileNotReadable

MAX_SIDE = 1568
MAX_PIXELS = 1_150_000

try:  # HEIC/HEIF where the optional plugin is installed
    from pillow_heif import register_heif_opener  # type: ignore[import-not-found]

    register_heif_opener()
except ImportError:  # pragma: no cover - optional
    pass


@dataclass(frozen=True)
class ModelImage:
    data: bytes
    mime_type: str
    width: int
    height: int
    original_width: int
    original_height: int


def fit_size(width: int, height: int) -> tuple[int, int]:
    scale = min(1.0, MAX_SIDE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return max(1, int(width * scale)), max(1, int(height * scale))


def for_model(data: bytes, what: str = "The data") -> ModelImage:
    """Downscale when needed; keep PNG for PNGs (screenshots are text-heavy), JPEG for photos."""
    try:
        with warnings.catch_warnings():  # Pillow only warns between 1x and 2x its pixel limit: refuse those too
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise FileNotReadable(f"The image has more than {Image.MAX_IMAGE_PIXELS:,} pixels: too many to open safely "
                              "(it may be a decompression bomb).", "Give a smaller image.") from None
    except UnidentifiedImageError:  # its message is the repr of our buffer: nothing to tell the model
        raise FileNotReadable(f"{what} is not an image (not a PNG, JPEG, GIF or WebP).",
                              "Give the path of an image file, e.g. a screenshot a reply saved.") from None
    except OSError as error:  # a truncated or damaged image
        raise FileNotReadable(f"{what} is a damaged or truncated image ({error}).",
                              "Give another image file, or take the screenshot again.") from None
    width, height = image.size
    target = fit_size(width, height)
    fmt = (image.format or "PNG").upper()
    if target == (width, height) and fmt in ("PNG", "JPEG", "GIF", "WEBP"):
        return ModelImage(data, Image.MIME[fmt], width, height, width, height)
    if image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    resized = image.resize(target, Image.LANCZOS) if target != (width, height) else image
    out = io.BytesIO()
    if fmt == "JPEG":
        resized.convert("RGB").save(out, "JPEG", quality=85)
        mime = "image/jpeg"
    else:
        resized.save(out, "PNG", optimize=False)
        mime = "image/png"
    return ModelImage(out.getvalue(), mime, target[0], target[1], width, height)


def read_for_model(path: Path) -> ModelImage:
    try:
        if not path.is_file():  # a FIFO or a device is no image, and reading one could block for ever
            raise FileNotReadable(f"No image file at {path}.", "Check the path; screenshots are listed in the replies that saved them.")
        data = path.read_bytes()
    except OSError as error:
        raise FileNotReadable(f"Cannot read {path}: {error.strerror}.", "Check the path and its permissions.") from None
    return for_model(data, str(path))
