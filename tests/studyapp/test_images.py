"""Safe image serving: paths stay inside the image root, boxes are drawn, missing files noticed."""

import io
import os

import pytest
from PIL import Image

from studyapp.core import images


@pytest.fixture
def root(tmp_path):
    base = tmp_path / "root"
    (base / "scenes").mkdir(parents=True)
    Image.new("RGB", (100, 80), (255, 255, 255)).save(base / "scenes" / "a.png")
    (base / "broken.png").write_bytes(b"not an image at all")
    outside = tmp_path / "secret.png"
    Image.new("RGB", (10, 10), (0, 0, 0)).save(outside)
    os.symlink(outside, base / "link_out.png")
    os.symlink(base / "scenes" / "a.png", base / "link_in.png")
    return base


@pytest.mark.parametrize("path", ["../secret.png", "scenes/../../secret.png", "/etc/passwd",
                                  "link_out.png", "", "scenes\\a.png", "C:/x.png", "a\x00.png"])
def test_paths_outside_the_root_are_refused(root, path):
    with pytest.raises(images.UnsafeImagePath):
        images.resolve_image(root, path)
    assert images.image_status(root, path).status == "unsafe"
    with pytest.raises(images.UnsafeImagePath):
        images.render_png(root, path)


def test_paths_inside_the_root_resolve(root):
    assert images.resolve_image(root, "scenes/a.png") == (root / "scenes" / "a.png").resolve()
    assert images.resolve_image(root, "./scenes/a.png") == (root / "scenes" / "a.png").resolve()
    assert images.image_status(root, "link_in.png").ok  # a link that stays inside is fine


def test_missing_and_unreadable_images_give_none_and_a_notice(root):
    assert images.render_png(root, "scenes/nope.png") is None
    assert images.render_png(root, "broken.png") is None
    assert images.image_status(root, "scenes/nope.png").status == "missing"
    assert images.image_status(root, "broken.png").status == "unreadable"
    # the path comes from an items CSV: shown literally, never as Markdown
    assert r"scenes\/nope\.png" in images.missing_notice("scenes/nope.png")
    assert "<b>" not in images.missing_notice("<b>x</b>.png")


def test_boxes_are_drawn_in_their_role_colours(root):
    png = images.render_png(root, "scenes/a.png", {"human": [10, 20, 40, 70], "object": [50, 30, 90, 60]},
                            max_side=None)
    drawn = Image.open(io.BytesIO(png)).convert("RGB")
    assert drawn.size == (100, 80)
    assert drawn.getpixel((10, 45)) == images.ROLE_COLORS["human"]   # left edge of the human box
    assert drawn.getpixel((90, 45)) == images.ROLE_COLORS["object"]  # right edge of the object box
    assert drawn.getpixel((25, 45)) == (255, 255, 255)                # inside stays untouched
    plain = Image.open(io.BytesIO(images.render_png(root, "scenes/a.png")))
    assert plain.convert("RGB").getpixel((10, 45)) == (255, 255, 255)


def test_large_images_are_scaled_down(root):
    png = images.render_png(root, "scenes/a.png", max_side=50)
    assert Image.open(io.BytesIO(png)).size == (50, 40)


def test_check_images_lists_the_bad_files(root):
    check = images.check_images(root, ["scenes/a.png", "scenes/missing.png", "broken.png",
                                       "../secret.png", "scenes/a.png"])
    assert check.counts == {"ok": 1, "missing": 1, "unreadable": 1, "unsafe": 1}
    assert [(p, s) for p, s, _ in check.problems] == [
        ("scenes/missing.png", "missing"), ("broken.png", "unreadable"), ("../secret.png", "unsafe")]
    assert not check.ok
    assert check.text().splitlines()[0].endswith("1 ok, 1 missing, 1 unreadable, 1 unsafe")
