"""Images for a model: downscaled to at most 1568 px a side and 1.15 megapixels by default.

Those are the sizes vision models take without resizing on their side, so a larger image only
costs tokens and latency. A host whose model takes other sizes sets ``image_max_side`` and
``image_max_pixels``. HEIC/HEIF (phone photos) is read through pillow-heif.
"""

from __future__ import annotations

import functools
import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from webhand.errors import FileNotReadable

MAX_SIDE = 1568
MAX_PIXELS = 1_150_000

#: Formats sent as they are when no downscale is needed; anything else (HEIF, BMP, TIFF) is re-encoded.
_SENT_AS_IS = ("PNG", "JPEG", "GIF", "WEBP")
#: Photo formats: re-encoded as JPEG (a PNG of a photo is several times larger for nothing).
_PHOTO_FORMATS = ("JPEG", "HEIF", "HEIC", "AVIF")


@functools.cache
def _read_heic() -> None:
    """Teach Pillow HEIC/HEIF (phone photos), on the first image: importing pillow-heif costs
    ~40 ms, which every server start would pay otherwise (cold start, issue 11)."""
    from pillow_heif import register_heif_opener

    register_heif_opener()


@dataclass(frozen=True)
class ModelImage:
    data: bytes
    mime_type: str
    width: int
    height: int
    original_width: int
    original_height: int


def fit_size(width: int, height: int, max_side: int = MAX_SIDE, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    scale = min(1.0, max_side / max(width, height), math.sqrt(max_pixels / (width * height)))
    return max(1, int(width * scale)), max(1, int(height * scale))


def for_model(data: bytes, what: str = "The data", *, max_side: int = MAX_SIDE,
              max_pixels: int = MAX_PIXELS) -> ModelImage:
    """Downscale when needed; keep PNG for PNGs (screenshots are text-heavy), JPEG for photos."""
    image = open_image(data, what)
    width, height = image.size
    target = fit_size(width, height, max_side, max_pixels)
    fmt = (image.format or "PNG").upper()
    if target == (width, height) and fmt in _SENT_AS_IS:
        return ModelImage(data, Image.MIME[fmt], width, height, width, height)
    if image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    resized = image.resize(target, Image.LANCZOS) if target != (width, height) else image
    out = io.BytesIO()
    if fmt in _PHOTO_FORMATS:
        resized.convert("RGB").save(out, "JPEG", quality=85)
        mime = "image/jpeg"
    else:
        resized.save(out, "PNG", optimize=False)
        mime = "image/png"
    return ModelImage(out.getvalue(), mime, target[0], target[1], width, height)


def open_image(data: bytes, what: str = "The data") -> Image.Image:
    """Open and decode an image, refusing decompression bombs; every failure is a typed error."""
    _read_heic()
    try:
        with warnings.catch_warnings():  # Pillow only warns between 1x and 2x its pixel limit: refuse those too
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise FileNotReadable(f"The image has more than {Image.MAX_IMAGE_PIXELS:,} pixels: too many to open safely "
                              "(it may be a decompression bomb).", "Give a smaller image.") from None
    except UnidentifiedImageError:  # its message is the repr of our buffer: nothing to tell the model
        raise FileNotReadable(f"{what} is not an image (not a PNG, JPEG, GIF, WebP or HEIC).",
                              "Give the path of an image file, e.g. a screenshot a reply saved.") from None
    except OSError as error:  # a truncated or damaged image
        raise FileNotReadable(f"{what} is a damaged or truncated image ({error}).",
                              "Give another image file, or take the screenshot again.") from None
    return image


def read_for_model(path: Path, *, max_side: int = MAX_SIDE, max_pixels: int = MAX_PIXELS) -> ModelImage:
    try:
        if not path.is_file():  # a FIFO or a device is no image, and reading one could block for ever
            raise FileNotReadable(f"No image file at {path}.", "Check the path; screenshots are listed in the replies that saved them.")
        data = path.read_bytes()
    except OSError as error:
        raise FileNotReadable(f"Cannot read {path}: {error.strerror}.", "Check the path and its permissions.") from None
    return for_model(data, str(path), max_side=max_side, max_pixels=max_pixels)
