"""V-COCO's official evaluation, vectorized: agent AP and role AP (scenarios 1 and 2) as
``vsrl_eval.py`` (``s-gupta/v-coco``, commit 489cc4d) computes them.

Reference, transcribed loop for loop in ``tests/reference/vsrl_eval.py`` and compared to 1e-6 by
``tests/metrics/test_vcoco.py`` (``l.N`` cites ``vsrl_eval.py``):

- ground truth (l.93–168): the split's images (the ``.ids`` file must list the V-COCO file's
  images, ascending: l.40); their COCO annotations in file order, crowd ones included, minus
  ``ignore == 1``; boxes sanitized as l.104–115 do (``x2 = x1 + max(0, w − 1)``, clipped to the
  image, kept when ``area > 0``, ``x2 > x1``, ``y2 > y1``; a dropped person counts nowhere); the
  person class is the COCO file's first category; people whose annotation V-COCO did not label
  are *ignored*: a detection whose best-overlap person is one of them is dropped (l.262, 379);
- matching (l.252–294, 370–395): per image and action (role), detections with a non-NaN score
  in the order ``argsort()[::-1]`` gives — computed with the same numpy call on the same float32
  arrays (rows of equal length stacked, which numpy sorts row by row with its 1-D routine), so
  tied scores fall exactly as in ``vsrl_eval.py`` on the same machine; each detection takes the
  person of largest +1-pixel overlap (:func:`metrics.detection._boxes.box_iou` in float32, as the
  original computes it; the first on ties, the first NaN if any); a true positive when that person
  does the action, the overlap is ≥ the threshold (and the role's), and no earlier detection of
  the image took that person for this action (role);
- role overlap (l.266–280): with no object for the role, scenario 1 counts 1 only when the
  predicted role box is all zeros or all NaN, scenario 2 always 1;
- AP (l.297–318, 399–417): an action's (role's) matched detections over all images sorted by
  ``argsort()[::-1]`` of the float32 score array built in the original's order (images, then
  per-image processing order), VOC all-point AP (``voc_ap``) — the all-point AP of
  :func:`metrics.detection._ap.class_ap`; ``npos`` counts the labelled, kept people
  doing the action.
- means as printed: agent mAP = Σ agent AP / number of actions (l.422), role mAP = mean over the
  action-roles (l.325: ``nanmean``, 25 on V-COCO); and, named as such, the 24-role mean papers
  report (``point-instr`` left out).

Where ``vsrl_eval.py`` stops with an exception this evaluation gives a value or refuses the
input with one line: a detection missing a key (KeyError there) predicts nothing for that key
(a NaN score); an action (role) with no positive (``npos`` 0: its recall is NaN and l.316's
assertion fails) has AP ``None``, counted as 0 by the agent mean's sum and left out of the role
means; an action (role) with positives but no scored detection (``amax`` of nothing) has AP 0;
a detection in an image where COCO has no kept person (``argmax`` of nothing) is a false
positive; a role object whose COCO box was dropped or is not in the person's image (l.166's
assertion), or a split that is not the V-COCO file's images (l.40) is refused as bad input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from metrics.core._errors import InputError
from metrics.core._segments import first_occurrences
from metrics.datasets.vcoco._readers import CocoInstances, VcocoAction, VcocoDetections
from metrics.datasets.vcoco._vocabulary import LEFT_OUT_OF_24  # ("point-instr",): not in papers' role mean
from metrics.detection._ap import class_ap
from metrics.detection._boxes import box_iou

SCENARIOS = ("scenario_1", "scenario_2")


def detection_keys(actions: list[VcocoAction]) -> tuple[list[str], list[str]]:
    """The keys ``vsrl_eval.py`` reads from each detection (l.180–184): ``<action>_agent`` for
    every action and ``<action>_<role>`` for each of its object roles."""
    agent = [f"{a.name}_agent" for a in actions]
    role = [f"{a.name}_{r}" for a in actions for r in a.roles[1:]]
    return agent, role


# ------------------------------------------------------------------------------ ground truth
@dataclass
class GroundTruth:
    """The split's kept people, image by image (file order within an image)."""

    image_ids: np.ndarray            # (I,) the split, ascending
    person_image: np.ndarray         # (P,) index into image_ids, non-decreasing
    person_box: np.ndarray           # (P, 4) float32, sanitized
    labelled: np.ndarray             # (P,) bool: V-COCO labelled this person (else: ignored)
    action: np.ndarray               # (P, A) int8: 1 does the action, 0 not, -1 unlabelled
    role_box: np.ndarray             # (P, A, 2, 4) float32: the object of each role
    has_role: np.ndarray             # (P, A, 2) bool
    counts: dict = field(default_factory=dict)
    role_category: np.ndarray | None = None   # (P, A, 2) COCO category id of each role object (-1: none)


def _sanitize(coco: CocoInstances, sel: np.ndarray, width: np.ndarray, height: np.ndarray):
    """l.101–115 for the annotations ``sel`` of images of the given sizes: (kept, boxes float64)."""
    x1, y1, w, h = coco.bbox[sel].T
    x2 = x1 + np.maximum(0., w - 1.)
    y2 = y1 + np.maximum(0., h - 1.)
    x1 = np.minimum(width - 1., np.maximum(0., x1))
    y1 = np.minimum(height - 1., np.maximum(0., y1))
    x2 = np.minimum(width - 1., np.maximum(0., x2))
    y2 = np.minimum(height - 1., np.maximum(0., y2))
    kept = ~coco.ignore[sel] & (coco.area[sel] > 0) & (x2 > x1) & (y2 > y1)
    return kept, np.stack([x1, y1, x2, y2], axis=1)


def ground_truth(actions: list[VcocoAction], coco: CocoInstances, image_ids: np.ndarray,
                 files: dict | None = None) -> GroundTruth:
    """The people of the split with their labels and role objects (``_get_vcocodb``, l.67–168)."""
    files = {"vcoco": "the V-COCO file", "coco": coco.source or "the COCO file", "ids": "the ids file",
             **(files or {})}
    split = np.sort(np.unique(actions[0].image_id))
    if len(split) != len(image_ids) or not np.array_equal(split, image_ids):
        extra = np.setdiff1d(image_ids, split)
        lacking = np.setdiff1d(split, image_ids)
        detail = (f"image {extra[0]} is not annotated in {files['vcoco']}" if len(extra) else
                  f"image {lacking[0]} of {files['vcoco']} is not listed" if len(lacking) else
                  "it is not in ascending order, each id once")
        raise InputError(f"{files['ids']}: must list the images of {files['vcoco']} ({len(split)}), ascending, as "
                         f"vsrl_eval.py asserts; {detail}")
    n_img = len(image_ids)
    # images: each split image must be in COCO (loadImgs, l.68)
    order = np.argsort(coco.image_id, kind="stable")
    at = np.searchsorted(coco.image_id[order], image_ids)
    found = (at < len(order)) & (coco.image_id[order][np.minimum(at, len(order) - 1)] == image_ids)
    if not found.all():
        raise InputError(f"{files['coco']}: images: no image {image_ids[~found][0]} (an image of the split)")
    img_row = order[at]
    width, height = coco.width[img_row], coco.height[img_row]
    # annotations of split images, image by image in file order (getAnnIds, coco.py l.145-146)
    pos = np.searchsorted(image_ids, coco.ann_image_id)
    in_split = (pos < n_img) & (image_ids[np.minimum(pos, n_img - 1)] == coco.ann_image_id)
    sel = np.flatnonzero(in_split)
    sel = sel[np.argsort(pos[sel], kind="stable")]
    kept, boxes = _sanitize(coco, sel, width[pos[sel]], height[pos[sel]])
    obj = sel[kept]
    obj_image = pos[obj]
    obj_box = boxes[kept].astype(np.float32)
    obj_ann = coco.ann_id[obj]
    cats = coco.category_ids
    known = np.isin(coco.category_id[obj], cats)
    if not known.all():
        raise InputError(f"{files['coco']}: annotation {obj_ann[~known][0]}: category_id "
                         f"{coco.category_id[obj][~known][0]} is not among the categories")
    if coco.category_names[0] != "person":
        raise InputError(f"{files['coco']}: categories: the first category is {coco.category_names[0]!r}; "
                         "vsrl_eval.py takes the first as the person class, so it must be 'person'")
    person = coco.category_id[obj] == cats[0]
    p_obj = np.flatnonzero(person)
    p_ann = obj_ann[p_obj]
    n_act = len(actions)
    labelled = np.isin(p_ann, actions[0].ann_id)                             # l.147
    action = np.where(labelled[:, None], 0, -1).astype(np.int8).repeat(n_act, axis=1)
    role_box = -np.ones((len(p_obj), n_act, 2, 4), dtype=np.float32)
    has_role = np.zeros((len(p_obj), n_act, 2), dtype=bool)
    role_category = -np.ones((len(p_obj), n_act, 2), dtype=np.int64)
    # kept objects by annotation id (ids are unique: read_coco checks), for the role objects
    by_ann = np.argsort(obj_ann, kind="stable")
    for i, act in enumerate(actions):                                        # l.153-167
        rows = np.flatnonzero(act.label == 1)
        if not len(rows):
            continue
        pos_ann = act.ann_id[rows]
        o = np.argsort(pos_ann, kind="stable")
        k = np.searchsorted(pos_ann[o], p_ann)
        hit = labelled & (k < len(o)) & (pos_ann[o][np.minimum(k, len(o) - 1)] == p_ann)
        people = np.flatnonzero(hit)
        action[people, i] = 1
        row = rows[o[k[people]]]
        for j in range(1, len(act.roles)):
            oid = act.role_object_id[row, j]
            need = oid != 0
            q = people[need]
            t = np.searchsorted(obj_ann[by_ann], oid[need])
            t_ok = t < len(by_ann)
            target = by_ann[np.minimum(t, len(by_ann) - 1)] if len(by_ann) else np.zeros(len(t), dtype=np.int64)
            good = t_ok & (obj_ann[target] == oid[need]) & (obj_image[target] == obj_image[p_obj[q]])
            if not good.all():
                b = int(np.flatnonzero(~good)[0])
                raise InputError(
                    f"{files['vcoco']}: action {act.name}, role {act.roles[j]}: person {p_ann[q[b]]} has object "
                    f"{oid[need][b]}, which is not a kept box of image {image_ids[obj_image[p_obj[q[b]]]]} in "
                    f"{files['coco']} (vsrl_eval.py stops here: assertion at l.166)")
            role_box[q, i, j - 1] = obj_box[target]
            has_role[q, i, j - 1] = True
            role_category[q, i, j - 1] = coco.category_id[obj[target]]
    counts = {"images": int(n_img), "people": int(len(p_obj)), "people_labelled": int(labelled.sum()),
              "people_ignored": int((~labelled).sum()),
              "annotations_dropped": int(len(sel) - len(obj))}
    return GroundTruth(image_ids, obj_image[p_obj], obj_box[p_obj], labelled, action, role_box, has_role, counts,
                       role_category)


# -------------------------------------------------------------------------------- matching
def best_person(gt: GroundTruth, image: np.ndarray, box: np.ndarray):
    """Each detection's person of largest overlap in its image (``get_overlap`` then
    ``argmax`` / ``max``, l.254–258): ``(j_max, ov_max)``, the first on ties and the first NaN
    when there is one (then ``ov_max`` is NaN); ``j_max`` −1 when the image has no person."""
    n_img = len(gt.image_ids)
    count = np.bincount(gt.person_image, minlength=n_img)
    first = np.r_[0, np.cumsum(count)[:-1]]
    c = count[image]
    j_max = np.full(len(image), -1, dtype=np.int64)
    ov_max = np.full(len(image), np.nan, dtype=np.float32)
    has = c > 0
    if not has.any():
        return j_max, ov_max
    c_has = c[has]
    starts = np.r_[0, np.cumsum(c_has)[:-1]]
    edge_det = np.repeat(np.flatnonzero(has), c_has)
    edge_person = np.repeat(first[image[has]], c_has) + np.arange(len(edge_det)) - np.repeat(starts, c_has)
    ov = box_iou(gt.person_box[edge_person], box[edge_det], pixel_offset=1.0, dtype=np.float32)
    best = np.maximum.reduceat(ov, starts)                 # NaN when any is NaN, as ndarray.max
    nan = np.isnan(ov)
    at = np.where((ov == np.repeat(best, c_has)) | (nan & np.repeat(np.isnan(best), c_has)),
                  np.arange(len(ov)), len(ov))
    j_max[has] = edge_person[np.minimum.reduceat(at, starts)]
    ov_max[has] = best
    return j_max, ov_max


def processing_order(score: np.ndarray, image: np.ndarray) -> np.ndarray:
    """The detections with a non-NaN score (``score`` float32, ``image`` non-decreasing) in the
    order ``vsrl_eval.py`` visits them: images in turn, each in ``score.argsort()[::-1]``
    order of its own detections (l.245–252, 363–370). Images with the same number of detections
    are sorted as the rows of one array: numpy sorts each row with the 1-D routine, so ties fall
    as in the per-image calls."""
    valid = np.flatnonzero(~np.isnan(score))
    if not len(valid):
        return valid
    img = image[valid]
    starts = np.flatnonzero(np.r_[True, img[1:] != img[:-1]])
    lengths = np.diff(np.r_[starts, len(valid)])
    out = np.empty(len(valid), dtype=np.int64)
    for length in np.unique(lengths):
        s = starts[lengths == length]
        if length == 1:
            out[s] = valid[s]
            continue
        cols = s[:, None] + np.arange(length)
        members = valid[cols]
        o = score[members].argsort(axis=1)[:, ::-1]
        out[cols] = np.take_along_axis(members, o, axis=1)
    return out


def _matched(seq: np.ndarray, ok: np.ndarray, j_max: np.ndarray) -> np.ndarray:
    """TP flags along ``seq`` (the visiting order): a detection that qualifies (``ok``) takes its
    person unless an earlier one of the sequence took it (``covered``, l.285–291)."""
    tp = np.zeros(len(seq), dtype=bool)
    q = np.flatnonzero(ok[seq])
    if len(q):
        tp[q[first_occurrences(j_max[seq[q]])]] = True
    return tp


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each entry's place in ``values.argsort()[::-1]`` (l.307, 406)."""
    rank = np.empty(len(values), dtype=np.int64)
    rank[values.argsort()[::-1]] = np.arange(len(values))
    return rank


# ---------------------------------------------------------------------------------- result
@dataclass(frozen=True)
class VcocoResult:
    """Agent AP per action, role AP per action-role and scenario, and their means."""

    actions: tuple[str, ...]
    roles: tuple[tuple[str, ...], ...]
    agent_ap: dict                       # action -> AP (None: no positive)
    role_ap: dict                        # scenario -> "action-role" -> AP
    n_pos: dict                          # action -> people doing it
    iou: float
    counts: dict
    ground_truth: GroundTruth | None = field(default=None, repr=False, compare=False)
    category_names: dict = field(default_factory=dict, repr=False, compare=False)   # COCO id -> name
    vcoco_actions: tuple = field(default=(), repr=False, compare=False)

    @property
    def agent_map(self) -> float:
        """Σ agent AP / number of actions, as ``vsrl_eval.py`` prints it (l.422)."""
        return sum(v for v in self.agent_ap.values() if v is not None) / len(self.actions)

    def role_map(self, scenario: str, leave_out: tuple[str, ...] = ()) -> float | None:
        """Mean role AP over the action-roles with a value (l.325), minus ``leave_out``."""
        values = [v for k, v in self.role_ap[scenario].items() if v is not None and k not in leave_out]
        return sum(values) / len(values) if values else None

    def to_dict(self) -> dict:
        n_roles = len(self.role_ap[SCENARIOS[0]])
        left = [k for k in LEFT_OUT_OF_24 if k in self.role_ap[SCENARIOS[0]]]
        return {
            "agent_ap": dict(self.agent_ap),
            "agent_map": self.agent_map,
            "role_ap": {s: dict(self.role_ap[s]) for s in SCENARIOS},
            "role_map": {s: self.role_map(s) for s in SCENARIOS},
            "role_map_24": {s: self.role_map(s, LEFT_OUT_OF_24) for s in SCENARIOS},
            "n_pos": dict(self.n_pos),
            "counts": dict(self.counts),
            "params": {
                "iou": self.iou,
                "agent_map": f"sum of the {len(self.actions)} agent APs / {len(self.actions)} (vsrl_eval.py's "
                             "'Average Agent AP'; an action without positives adds 0)",
                "role_map": f"mean over the {n_roles} action-roles with a value (vsrl_eval.py's 'Average Role AP')",
                "role_map_24": f"mean over the action-roles without {', '.join(left) or 'point-instr'} "
                               f"({n_roles - len(left)} here), as papers report role AP",
                "source": "s-gupta/v-coco vsrl_eval.py (commit 489cc4d), vectorized",
            },
        }


def evaluate(actions: list[VcocoAction], coco: CocoInstances, image_ids: np.ndarray, dets: VcocoDetections,
             *, iou: float = 0.5, files: dict | None = None) -> VcocoResult:
    """Agent and role AP of ``dets`` as ``VCOCOeval._do_eval`` computes them (see the module)."""
    gt = ground_truth(actions, coco, np.asarray(image_ids, dtype=np.int64), files)
    n_img = len(gt.image_ids)
    thr = np.float32(iou)                           # l.284: float32 overlap against the threshold
    # detections of the split's images, image by image in file order (l.174-175)
    pos = np.searchsorted(gt.image_ids, dets.image_id)
    in_split = (pos < n_img) & (gt.image_ids[np.minimum(pos, n_img - 1)] == dets.image_id)
    sel = np.flatnonzero(in_split)
    sel = sel[np.argsort(pos[sel], kind="stable")]
    image = pos[sel]
    j_max, ov_max = best_person(gt, image, dets.person_box[sel])
    has_person = j_max >= 0
    jm = np.maximum(j_max, 0)
    ignored = has_person & ~gt.labelled[jm] if len(gt.labelled) else np.zeros(len(sel), dtype=bool)
    located = has_person & (ov_max >= thr)
    n_pos = (gt.action == 1).sum(axis=0)

    # one "class" per action (agent AP) and per action-role and scenario (role AP)
    classes: list[tuple] = []
    cls_parts, tp_parts, pos_parts, n_gt = [], [], [], []
    offset = 0

    def add(key, seq, tp, score):
        nonlocal offset
        classes.append(key)
        cls_parts.append(np.full(len(seq), len(classes) - 1))
        tp_parts.append(tp)
        pos_parts.append(offset + _ranks(score[seq]))
        offset += len(seq)
        n_gt.append(n_pos[key[1]])

    for i, act in enumerate(actions):
        true_action = has_person & (gt.action[jm, i] == 1) if len(gt.action) else np.zeros(len(sel), dtype=bool)
        score = dets.scores[f"{act.name}_agent"][sel]
        seq = processing_order(score, image)
        seq = seq[~ignored[seq]]
        add(("agent", i, None, None), seq, _matched(seq, true_action & located, jm), score)
        for r in range(len(act.roles) - 1):
            value = dets.scores[f"{act.name}_{act.roles[r + 1]}"][sel]
            score, role = value[:, 4], value[:, :4]
            seq = processing_order(score, image)
            seq = seq[~ignored[seq]]
            has = gt.has_role[jm, i, r] & has_person if len(gt.has_role) else np.zeros(len(sel), dtype=bool)
            ov_role = box_iou(gt.role_box[jm, i, r][seq], role[seq], pixel_offset=1.0, dtype=np.float32) \
                if len(gt.role_box) else np.zeros(len(seq), dtype=np.float32)
            role_ok = np.zeros(len(sel), dtype=bool)
            role_ok[seq] = ov_role >= thr                           # l.280, 284
            none_predicted = np.all(role == 0.0, axis=1) | np.all(np.isnan(role), axis=1)    # l.268
            base = true_action & located
            for scenario, no_object_ok in (("scenario_1", none_predicted), ("scenario_2", True)):
                ok = base & np.where(has, role_ok, no_object_ok)
                add((scenario, i, r, f"{act.name}-{act.roles[r + 1]}"), seq, _matched(seq, ok, jm), score)

    cls = np.concatenate(cls_parts) if cls_parts else np.zeros(0, dtype=np.int64)
    tp = np.concatenate(tp_parts) if tp_parts else np.zeros(0, dtype=bool)
    rank = np.concatenate(pos_parts) if pos_parts else np.zeros(0, dtype=np.int64)
    n_gt_per_class = np.asarray(n_gt, dtype=np.int64)
    ap = class_ap(cls, tp, rank, n_gt_per_class)                              # VOC all-point AP (voc_ap, l.464-484)

    agent_ap: dict[str, float | None] = {}
    role_ap: dict[str, dict[str, float | None]] = {s: {} for s in SCENARIOS}
    for c, (kind, i, _, label) in enumerate(classes):
        class_value = float(ap[c]) if n_gt_per_class[c] > 0 else None
        if kind == "agent":
            agent_ap[actions[i].name] = class_value
        else:
            role_ap[kind][label] = class_value
    counts = dict(gt.counts)
    counts.update({
        "detections": int(len(dets)),
        "detections_outside_split": int(len(dets) - len(sel)),
        "detections_in_images_without_people": int((~has_person).sum()),
        "missing_values": int(sum(dets.missing.values())),      # (detection, key) pairs without a value
    })
    return VcocoResult(tuple(a.name for a in actions), tuple(a.roles for a in actions), agent_ap, role_ap,
                       {a.name: int(n_pos[i]) for i, a in enumerate(actions)}, float(iou), counts,
                       ground_truth=gt, category_names=dict(zip(coco.category_ids.tolist(), coco.category_names)),
                       vcoco_actions=tuple(actions))


def read_files(vcoco, coco, ids, pred=None):
    """``(actions, image ids, COCO instances, detections or None, file names)`` of the official
    files (see :mod:`metrics.datasets.vcoco._readers`)."""
    from metrics.datasets.vcoco._readers import read_coco, read_ids, read_vcoco, read_vcoco_detections

    actions = read_vcoco(vcoco)
    image_ids = read_ids(ids)
    dets = None if pred is None else read_vcoco_detections(pred, *detection_keys(actions))
    instances = read_coco(coco, image_ids)
    files = {"vcoco": str(vcoco), "coco": str(coco), "ids": str(ids), "pred": str(pred)}
    return actions, image_ids, instances, dets, files


def evaluate_files(vcoco, coco, ids, pred, *, iou: float = 0.5) -> VcocoResult:
    """:func:`evaluate` on the official files (:func:`read_files`)."""
    actions, image_ids, instances, dets, files = read_files(vcoco, coco, ids, pred)
    return evaluate(actions, instances, image_ids, dets, iou=iou, files=files)
