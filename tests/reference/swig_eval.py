"""Plain-Python transcription of the released SWIG-HOI evaluation (reference for the tests).

``scwangdyd/large_vocabulary_hoi_detection`` (commit db7a439), the numeric logic only, without
torch, detectron-style catalogs or LVIS:

- ``choir/data/datasets/swig.py`` ``load_swig_json`` (l.18-110) and ``convert_xyxy_to_xywh``
  (l.113-118): the annotation JSON as the dataset dicts;
- ``choir/data/datasets/builtin_meta.py`` ``_get_swig_meta`` (l.61-93): the interaction map and
  the evaluated / novel / rare / common interaction ids;
- ``choir/evaluation/swig_evaluation.py``: ``_convert_to_hico_dict`` (l.697-739, ground truth per
  interaction and image), ``write_hoi_results`` (l.463-480, the predictions pickle),
  ``_eval_hoi_predictions`` (l.280-319), ``_derive_swig_results`` (l.321-352), ``calc_ap``
  (l.742-787), ``calc_hit`` (l.790-794) and ``iou`` (l.797-825);
- ``choir/structures/boxes.py`` ``BoxMode.convert`` (l.44-130), XYWH_ABS -> XYXY_ABS on one box
  given as a list: ``torch.tensor(box)`` (float32 when the list holds a float, int64 when it
  holds only ints), ``arr[:, 2] += arr[:, 0]``, ``arr[:, 3] += arr[:, 1]``, ``.tolist()``;
  replaced here by the same arithmetic in NumPy.

Line numbers refer to those files. Only what the HOI numbers depend on is kept (file names,
image sizes and ``aux_category_id``, used for the LVIS box evaluation, are left out).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


# -------------------------------------------------------------- choir/structures/boxes.py
def box_xywh_to_xyxy(box):
    """``BoxMode.convert(box, BoxMode.XYWH_ABS, BoxMode.XYXY_ABS)`` on a 4-list (l.44-130)."""
    dtype = np.float32 if any(isinstance(v, float) for v in box) else np.int64   # torch.tensor(box)
    arr = np.array(box, dtype=dtype)[None, :]                                     # l.64
    arr[:, 2] += arr[:, 0]                                                        # l.113
    arr[:, 3] += arr[:, 1]                                                        # l.114
    return list(arr.flatten().tolist())                                           # l.126


# -------------------------------------------------------------- choir/data/datasets/swig.py
def convert_xyxy_to_xywh(boxes):                                                  # l.113-118
    if isinstance(boxes, list):
        boxes = np.array(boxes)
    boxes[:, 2] = boxes[:, 2] - boxes[:, 0]
    boxes[:, 3] = boxes[:, 3] - boxes[:, 1]
    return boxes.tolist()


def load_swig_json(imgs_anns, n_actions):
    """``load_swig_json`` (l.18-110) on the parsed JSON; ``id_map`` is the identity (SWIG-HOI's
    1000 category ids are 0..999, ``builtin_meta.py`` l.65-68)."""
    dataset_dicts = []
    for anno_dict in imgs_anns:                                                   # l.52
        record = {"image_id": anno_dict["img_id"]}                                # l.57
        if len(anno_dict["box_annotations"]) == 0 or len(anno_dict["hoi_annotations"]) == 0:
            continue                                                              # l.59-61
        boxes = convert_xyxy_to_xywh([obj["bbox"] for obj in anno_dict["box_annotations"]])  # l.63
        classes = [obj["category_id"] for obj in anno_dict["box_annotations"]]    # l.64
        hoi_anno_dicts = dict()                                                   # l.73
        for hoi in anno_dict["hoi_annotations"]:
            person_id = hoi["subject_id"]
            object_id = hoi["object_id"]
            action_id = hoi["action_id"]
            assert classes[person_id] == 0                                        # l.78
            if person_id not in hoi_anno_dicts:
                hoi_anno_dicts[person_id] = defaultdict(list)
            hoi_anno_dicts[person_id][object_id].append(action_id)                # l.81
        objs = []
        for person_id, hoi_dict in hoi_anno_dicts.items():                        # l.84
            obj = {"bbox": boxes[person_id], "category_id": 0, "interaction": []}
            for object_id, action_ids in hoi_dict.items():                        # l.92
                actions = np.zeros(n_actions, dtype=np.float32)
                actions[action_ids] = 1.                                          # l.94
                obj["interaction"].append({"bbox": boxes[object_id],
                                           "category_id": classes[object_id],
                                           "action_id": actions})
            assert len(obj["interaction"]) > 0, "no valid interactions"
            objs.append(obj)
        record["annotations"] = objs
        dataset_dicts.append(record)
    return dataset_dicts


# -------------------------------------------------------------- builtin_meta.py
def swig_meta(interactions):
    """``_get_swig_meta`` (l.61-93): interactions as ``SWIG_INTERACTIONS`` lists them."""
    return {
        "action_object_to_interaction_map": {
            tuple([x["action_id"], x["object_id"]]): x["id"] for x in interactions},    # l.71-73
        "interactions_for_eval": [x["id"] for x in interactions if x["evaluation"] == 1],  # l.75
        "novel_interaction_ids": [x["id"] for x in interactions if x["frequency"] == 0],   # l.76
        "rare_interaction_ids": [x["id"] for x in interactions if x["frequency"] == 1],    # l.77
        "common_interaction_ids": [x["id"] for x in interactions if x["frequency"] == 2],  # l.78
    }


# -------------------------------------------------------------- swig_evaluation.py
def convert_to_hico_dict(dataset_dicts, metadata):
    """``_convert_to_hico_dict`` (l.697-739)."""
    action_object_to_interaction_map = metadata["action_object_to_interaction_map"]
    gts = {hoi_id: defaultdict(list) for _, hoi_id in action_object_to_interaction_map.items()}
    for _, anno_dict in enumerate(dataset_dicts):
        img_id = anno_dict["image_id"]
        for annotation in anno_dict.get("annotations", []):
            person_box = box_xywh_to_xyxy(annotation["bbox"])                     # l.720-722
            person_box = [round(float(x), 3) for x in person_box]                 # l.723
            for hoi_annotation in annotation["interaction"]:
                object_box = box_xywh_to_xyxy(hoi_annotation["bbox"])             # l.725-727
                object_box = [round(float(x), 3) for x in object_box]             # l.728
                object_id = int(hoi_annotation["category_id"])
                for action_id in np.where(hoi_annotation["action_id"])[0]:       # l.731
                    hoi_id = action_object_to_interaction_map[tuple([action_id, object_id])]
                    gts[hoi_id][img_id].append(person_box + object_box)           # l.733
    for hoi_id in gts:
        for img_id in gts[hoi_id]:
            gts[hoi_id][img_id] = np.array(gts[hoi_id][img_id])                  # l.737
    return gts


def write_hoi_results(images, results):
    """``write_hoi_results`` (l.463-480) without the file: the list it pickles."""
    assert len(images) == len(results)
    dets = [[] for _ in range(20000)]
    for img_id, results_per_image in zip(images, results):
        dets[img_id] = results_per_image
    return dets


def eval_hoi_predictions(images, results, gts, metadata):
    """``_eval_hoi_predictions`` (l.280-319) from the predictions, then ``_derive_swig_results``:
    returns ``(swig_ap, swig_rec, results)`` (results in percent, as the original logs them)."""
    eval_hois = np.asarray(metadata["interactions_for_eval"])                     # l.297
    size = max(eval_hois) + 1
    scores = [[] for _ in range(size)]
    boxes = [[] for _ in range(size)]
    keys = [[] for _ in range(size)]

    for img_id, dets in zip(images, results):                                     # l.303-308
        for det in dets:
            hoi_id = int(det[0])
            boxes[hoi_id].append(det[1:-2])
            scores[hoi_id].append(float(det[-2]))
            keys[hoi_id].append(img_id)

    swig_ap, swig_rec = np.zeros(size), np.zeros(size)                            # l.310-314
    for hoi_id in eval_hois:
        gts_h = gts[hoi_id]
        ap, rec = calc_ap(scores[hoi_id], boxes[hoi_id], keys[hoi_id], gts_h)
        swig_ap[hoi_id], swig_rec[hoi_id] = ap, rec
    return swig_ap, swig_rec, derive_swig_results(swig_ap, metadata)


def evaluate_pickle(dets, gts, metadata):
    """The evaluation of the list ``write_hoi_results`` pickles: image ``i``'s detections are
    ``dets[i]``, images in index order."""
    return eval_hoi_predictions(list(range(len(dets))), dets, gts, metadata)


def derive_swig_results(swig_ap, metadata):
    """``_derive_swig_results`` (l.321-352)."""
    eval_hois = np.array(metadata["interactions_for_eval"])
    rare_hois = np.array(metadata["rare_interaction_ids"])
    novel_hois = np.array(metadata["novel_interaction_ids"])
    common_hois = np.array(metadata["common_interaction_ids"])

    eval_common_hois = np.intersect1d(eval_hois, common_hois)
    eval_rare_hois = np.intersect1d(eval_hois, rare_hois)
    eval_novel_hois = np.intersect1d(eval_hois, novel_hois)
    eval_known_hois = np.setdiff1d(eval_hois, novel_hois)

    with np.errstate(invalid="ignore"), _quiet_mean():
        full_map = np.mean(swig_ap[eval_known_hois]) * 100.
        rare_map = np.mean(swig_ap[eval_rare_hois]) * 100.
        non_rare_map = np.mean(swig_ap[eval_common_hois]) * 100.
        novel_map = np.mean(swig_ap[eval_novel_hois]) * 100.
    return {"full": full_map, "rare": rare_map, "non_rare": non_rare_map, "novel": novel_map}


def calc_ap(scores, boxes, keys, gt_boxes):                                        # l.742
    if len(keys) == 0:
        return 0, 0

    if isinstance(boxes, list):
        scores, boxes, key = np.array(scores), np.array(boxes), np.array(keys)    # sic: key

    hit = []
    idx = np.argsort(scores)[::-1]
    npos = 0
    used = {}

    for key in gt_boxes.keys():
        npos += gt_boxes[key].shape[0]
        used[key] = set()

    for i in range(min(len(idx), 19999)):                                         # l.758: the cap
        pair_id = idx[i]
        box = boxes[pair_id, :]
        key = keys[pair_id]
        if key in gt_boxes:
            maxi = 0.0
            k = -1
            for i in range(gt_boxes[key].shape[0]):                               # sic: reuses i
                tmp = calc_hit(box, gt_boxes[key][i, :])
                if maxi < tmp:
                    maxi = tmp
                    k = i
            if k in used[key] or maxi < 0.5:                                      # l.770
                hit.append(0)
            else:
                hit.append(1)
                used[key].add(k)
        else:
            hit.append(0)
    bottom = np.array(range(len(hit))) + 1
    hit = np.cumsum(hit)
    with np.errstate(divide="ignore", invalid="ignore"):                          # npos 0: NaN recall
        rec = hit / npos
    prec = hit / bottom
    ap = 0.0
    for i in range(11):                                                           # l.782-785
        mask = rec >= (i / 10.0)
        if np.sum(mask) > 0:
            ap += np.max(prec[mask]) / 11.0

    return ap, np.max(rec)


def calc_hit(det, gtbox):                                                          # l.790
    gtbox = gtbox.astype(np.float64)
    hiou = iou(det[:4], gtbox[:4])
    oiou = iou(det[4:], gtbox[4:])
    return min(hiou, oiou)


def iou(bb1, bb2, debug=False):                                                    # l.797
    x1 = bb1[2] - bb1[0]
    y1 = bb1[3] - bb1[1]
    if x1 < 0:
        x1 = 0
    if y1 < 0:
        y1 = 0

    x2 = bb2[2] - bb2[0]
    y2 = bb2[3] - bb2[1]
    if x2 < 0:
        x2 = 0
    if y2 < 0:
        y2 = 0

    xiou = min(bb1[2], bb2[2]) - max(bb1[0], bb2[0])
    yiou = min(bb1[3], bb2[3]) - max(bb1[1], bb2[1])
    if xiou < 0:
        xiou = 0
    if yiou < 0:
        yiou = 0

    if xiou * yiou <= 0:
        return 0
    else:
        return xiou * yiou / (x1 * y1 + x2 * y2 - xiou * yiou)


class _quiet_mean:
    """``np.mean`` of an empty selection warns and gives NaN (as in the original); silenced."""

    def __enter__(self):
        import warnings
        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def evaluate(gt_json, dets, interactions, n_actions):
    """Everything from the parsed annotation JSON, the predictions list and the interaction
    metadata: ``(swig_ap, swig_rec, results)``."""
    metadata = swig_meta(interactions)
    gts = convert_to_hico_dict(load_swig_json(gt_json, n_actions), metadata)
    return evaluate_pickle(dets, gts, metadata)
