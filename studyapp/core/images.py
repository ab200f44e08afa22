"""Images of image studies, served safely from a study's image root (plain module, no Streamlit).

A study spec names an ``image_root``; items name their image by a path *relative* to that root
(``scenes/0001.png``). Nothing outside the root is ever opened: absolute paths, ``..``
components, backslashes, NUL bytes and symbolic links that lead out of the root are refused.

Stable API (other study types build on it):

- ``resolve_image(root, relative) -> Path``: the checked absolute path inside ``root`` (the file
  need not exist); raises :class:`UnsafeImagePath` (an ``InputError``) with a one-line message
  naming the path otherwise.
- ``image_status(root, relative) -> ImageStatus``: ``ok``, ``missing``, ``unreadable`` or
  ``unsafe``, with a one-line ``message``; never raises for a bad path.
- ``load_image(root, relative) -> PIL.Image.Image | None``: the decoded RGB image, None when the
  file is missing or unreadable (unsafe paths still raise).
- ``draw_boxes(image, boxes) -> PIL.Image.Image``: a copy with human boxes (blue) and object
  boxes (orange) drawn and labelled. ``boxes`` is a mapping ``{"human": [x1, y1, x2, y2],
  "object": [...]}`` (a value may also be a list of boxes) — the CrossHOI-Bench ``boxes``
  layout — or an iterable of ``(role, box)`` / ``(role, box, label)``. Boxes are pixel corners.
- ``render_png(root, relative, boxes=None, max_side=900) -> bytes | None``: PNG bytes for
  ``st.image`` (scaled so the longer side is at most ``max_side``), or None when the image is
  missing or unreadable; the page then shows ``missing_notice(relative)`` with ``st.warning``.
- ``missing_notice(relative) -> str``: the annotator-facing notice for a missing image (the
  path Markdown-escaped, since it comes from an items file).
- ``check_images(root, relative_paths) -> ImageCheck``: every path checked (exists, inside the
  root, decodes); ``ImageCheck.problems`` lists ``(path, status, message)`` of the bad ones and
  ``ImageCheck.text()`` is the report printed by ``python -m studyapp check-images``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from PIL import Image, ImageDraw, UnidentifiedImageError

from metrics import InputError

from . import safe_markdown

ROLE_COLORS = {"human": (31, 119, 180), "object": (255, 127, 14)}
OTHER_COLOR = (44, 160, 44)
STATUSES = ("ok", "missing", "unreadable", "unsafe")


class UnsafeImagePath(InputError):
    """An image path that is not a plain relative path inside the image root."""


@dataclass(frozen=True)
class ImageStatus:
    path: str
    status: str  # ok | missing | unreadable | unsafe
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class ImageCheck:
    """The result of :func:`check_images`."""

    root: str
    statuses: list[ImageStatus] = field(default_factory=list)

    @property
    def problems(self) -> list[tuple[str, str, str]]:
        return [(s.path, s.status, s.message) for s in self.statuses if not s.ok]

    @property
    def counts(self) -> dict[str, int]:
        out = {status: 0 for status in STATUSES}
        for s in self.statuses:
            out[s.status] += 1
        return out

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        counts = self.counts
        lines = [f"{len(self.statuses)} images under {self.root}: " +
                 ", ".join(f"{counts[s]} {s}" for s in STATUSES)]
        for path, status, message in self.problems:
            lines.append(f"  {status:<10} {path}: {message}")
        return "\n".join(lines)


def resolve_image(root: str | Path, relative: str) -> Path:
    """The absolute path of ``relative`` inside ``root``; :class:`UnsafeImagePath` otherwise."""
    text = str(relative) if relative is not None else ""
    if not text.strip():
        raise UnsafeImagePath("image path is empty")
    if "\x00" in text or "\\" in text:
        raise UnsafeImagePath(f"image path {text!r} contains a NUL byte or a backslash")
    pure = PurePosixPath(text)
    if pure.is_absolute() or (len(text) > 1 and text[1] == ":"):
        raise UnsafeImagePath(f"image path {text!r} is absolute; give it relative to the image root")
    if any(part == ".." for part in pure.parts):
        raise UnsafeImagePath(f"image path {text!r} contains '..'")
    base = Path(root).resolve()
    target = (base / Path(*pure.parts)).resolve()  # follows symbolic links
    if not target.is_relative_to(base):
        raise UnsafeImagePath(f"image path {text!r} leads outside the image root (symbolic link)")
    return target


def image_status(root: str | Path, relative: str) -> ImageStatus:
    """Whether the image can be shown; never raises for a bad path."""
    try:
        path = resolve_image(root, relative)
    except UnsafeImagePath as exc:
        return ImageStatus(str(relative), "unsafe", str(exc))
    if not path.is_file():
        return ImageStatus(str(relative), "missing", "no such file under the image root")
    try:
        with Image.open(path) as image:
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return ImageStatus(str(relative), "unreadable", f"cannot be decoded as an image ({exc})")
    return ImageStatus(str(relative), "ok")


def load_image(root: str | Path, relative: str) -> Image.Image | None:
    """The decoded RGB image, or None when it is missing or unreadable (unsafe paths raise)."""
    path = resolve_image(root, relative)
    if not path.is_file():
        return None
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return None


def _box_list(boxes) -> list[tuple[str, list[float], str]]:
    if not boxes:
        return []
    out = []
    if isinstance(boxes, Mapping):
        for role, value in boxes.items():
            if value is None or len(value) == 0:
                continue
            many = isinstance(value[0], (list, tuple))
            for box in (value if many else [value]):
                out.append((str(role), [float(v) for v in box], str(role)))
        return out
    for entry in boxes:
        role, box = entry[0], entry[1]
        label = entry[2] if len(entry) > 2 else role
        out.append((str(role), [float(v) for v in box], str(label)))
    return out


def draw_boxes(image: Image.Image, boxes) -> Image.Image:
    """A copy of ``image`` with the boxes drawn (human blue, object orange, others green)."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    width = max(2, round(max(out.size) / 200))
    for role, box, label in _box_list(boxes):
        if len(box) != 4:
            raise InputError(f"{role} box {box} does not have four numbers [x1, y1, x2, y2]")
        x1, y1, x2, y2 = box
        color = ROLE_COLORS.get(role, OTHER_COLOR)
        draw.rectangle([min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)], outline=color,
                       width=width)
        text_y = max(0, min(y1, y2) - 12)
        bbox = draw.textbbox((min(x1, x2) + 2, text_y), label)
        draw.rectangle(bbox, fill=color)
        draw.text((min(x1, x2) + 2, text_y), label, fill=(255, 255, 255))
    return out


def to_png(image: Image.Image, max_side: int | None = 900) -> bytes:
    if max_side and max(image.size) > max_side:
        scale = max_side / max(image.size)
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def render_png(root: str | Path, relative: str, boxes=None, max_side: int | None = 900) -> bytes | None:
    """PNG bytes of the image with its boxes, or None when it is missing or unreadable."""
    image = load_image(root, relative)
    if image is None:
        return None
    return to_png(draw_boxes(image, boxes) if boxes else image, max_side)


def width_for_height(png: bytes, max_height: int) -> int:
    """The display width (px) at which the PNG is at most ``max_height`` tall (never enlarged).

    >>> buffer = io.BytesIO(); Image.new("RGB", (800, 600)).save(buffer, "PNG")
    >>> width_for_height(buffer.getvalue(), 300)
    400
    """
    width, height = Image.open(io.BytesIO(png)).size
    return max(1, min(width, round(width * max_height / height)))


def missing_notice(relative: str) -> str:
    return (f"The image for this item ({safe_markdown.text(relative)}) is not available. Please answer from the "
            "text, and tell the researcher if this keeps happening.")


def check_images(root: str | Path, relative_paths: Iterable[str]) -> ImageCheck:
    """Check every image (each distinct path once, in first-seen order)."""
    result = ImageCheck(str(Path(root)))
    seen = set()
    for relative in relative_paths:
        if relative in seen:
            continue
        seen.add(relative)
        result.statuses.append(image_status(root, relative))
    return result
