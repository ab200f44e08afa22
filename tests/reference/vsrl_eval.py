"""Plain transcription of V-COCO's released evaluator (reference for the tests and the benchmark).

``s-gupta/v-coco``, ``vsrl_eval.py`` (commit 489cc4d, "data v3 & script"; Simplified BSD licence,
Copyright (c) 2017, Saurabh Gupta). ``l.N`` cites that file's line N. The loops are the
original's, statement for statement; the only changes:

- NumPy 2: ``np.bool`` → ``bool`` (l.87, 232, 358; removed in NumPy 1.24), and l.167's
  assignment of a one-element array to an array element (an error since NumPy 2.x) takes the
  element (``aid.item()``, which, like the original, raises when there is not exactly one);
- in-memory inputs: the V-COCO list, the COCO dict and the split's ids are passed instead of
  file names (l.29–38), and ``_do_eval`` takes a function that returns the detections where the
  original unpickles its file — called three times, once per evaluation (l.199–200, 331–332), as
  the original loads the pickle three times (``benchmarks/vcoco_eval.py`` passes one that
  unpickles the file);
- the results are kept (``self.agent_ap``, ``self.role_ap[eval_type]``, ``self.npos``, and the
  printed means ``self.agent_map``, ``self.role_map[eval_type]``) besides being printed;
- ``pycocotools.coco.COCO`` is replaced by :class:`COCO` below, a transcription of the five
  methods ``vsrl_eval.py`` calls (``cocodataset/cocoapi``, ``PythonAPI/pycocotools/coco.py``,
  commit 8c9bcc3, lines cited as ``coco.py l.N``).

What the original does (the behaviour ``metrics/datasets/vcoco/_evaluation.py`` reproduces):

- ground truth (l.67–168): the split's images in the ``.ids`` file's order, which l.40 asserts
  equals the sorted distinct image ids of the V-COCO file; per image, its COCO annotations in
  file order — crowd ones included (``iscrowd=None``, l.94) — minus ``ignore == 1``; boxes
  sanitized (l.104–115): ``x2 = x1 + max(0, w − 1)``, clipped to ``[0, width − 1]`` ×
  ``[0, height − 1]``, kept only when ``area > 0`` and ``x2 > x1`` and ``y2 > y1`` (a dropped
  person is gone: neither a positive nor an ignore region); the person class is the first
  category the COCO file lists (l.56–62, ``gt_classes == 1``, l.210 / 342); boxes float32;
- a person whose annotation id is not among the first action's rows (l.147) has no V-COCO
  labels: every action −1, so it is *ignored* (l.216, 348); a labelled person has 0 / 1 per action
  and, for a positive, the index of each role's object among the image's kept annotations
  (l.153–167; 0 in ``role_object_id`` = no object; an object that was dropped fails l.166's
  assertion);
- detections of an image are collected by scanning every detection (l.171–187), in file order;
  scores and boxes become float32; a role value is 5 numbers (box, score);
- per image and action (role): NaN scores are dropped (l.245, 363); the rest in
  ``argsort()[::-1]`` order of their score (l.250, 368; numpy's default sort is not stable, so
  ties fall as numpy's quicksort — introsort, or SIMD sorting networks on AVX-512 / AVX2 —
  leaves them); each detection is matched to the image's person of largest ``get_overlap`` with
  the +1-pixel convention (l.446–461), ``argmax`` taking the first on ties and the first NaN if
  any (l.257); matched to an ignored person, it is skipped entirely (l.262, 379); a true positive
  when that person does the action, the overlap is ≥ the threshold, (roles) the role overlap is
  too, and the person is not yet covered for this action (role) in this image; otherwise a
  false positive (l.284–294, 385–395); an image without any kept person makes ``argmax`` fail;
- role overlap (l.266–280) when the matched person has no object for the role: scenario 1
  counts it as 1 only when the predicted role box is all zeros or all NaN ("no role
  predicted"), else 0; scenario 2 counts it as 1 whatever was predicted; otherwise the +1-pixel
  overlap with the object's box;
- AP (l.297–318, 399–417): all of an action's (role's) scored detections, over all images, in
  ``argsort()[::-1]`` order of the float32 scores, float32 cumulative TP / FP, recall over
  ``npos`` (the labelled, kept people doing the action — the same count for its roles), VOC
  all-point AP (``voc_ap``, l.464–484); the assertion ``max(rec) <= 1`` fails when ``npos`` is 0
  (NaN recall) or there is no scored detection (``amax`` of nothing);
- printed means: "Average Agent AP" = ``nansum(agent_ap) / 26`` (l.422), "Average Role AP" =
  ``nanmean`` over the action-roles that have a role (l.325) — 25 on V-COCO, ``point-instr``
  included (papers report 24 without it).
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict

import numpy as np


# ----------------------------------------------------------------- pycocotools' COCO, in part
def _isArrayLike(obj):                                              # coco.py l.66-67
    return hasattr(obj, '__iter__') and hasattr(obj, '__len__')


class COCO:
    """``pycocotools.coco.COCO`` for a dataset dict already in memory (coco.py l.71-88)."""

    def __init__(self, dataset):
        self.dataset, self.anns, self.cats, self.imgs = dict(), dict(), dict(), dict()
        self.imgToAnns, self.catToImgs = defaultdict(list), defaultdict(list)
        assert type(dataset) == dict, 'annotation file format {} not supported'.format(type(dataset))
        self.dataset = dataset
        self.createIndex()

    def createIndex(self):                                          # coco.py l.90-119
        anns, cats, imgs = {}, {}, {}
        imgToAnns, catToImgs = defaultdict(list), defaultdict(list)
        if 'annotations' in self.dataset:
            for ann in self.dataset['annotations']:
                imgToAnns[ann['image_id']].append(ann)
                anns[ann['id']] = ann
        if 'images' in self.dataset:
            for img in self.dataset['images']:
                imgs[img['id']] = img
        if 'categories' in self.dataset:
            for cat in self.dataset['categories']:
                cats[cat['id']] = cat
        if 'annotations' in self.dataset and 'categories' in self.dataset:
            for ann in self.dataset['annotations']:
                catToImgs[ann['category_id']].append(ann['image_id'])
        self.anns = anns
        self.imgToAnns = imgToAnns
        self.catToImgs = catToImgs
        self.imgs = imgs
        self.cats = cats

    def getAnnIds(self, imgIds=[], catIds=[], areaRng=[], iscrowd=None):   # coco.py l.129-155
        imgIds = imgIds if _isArrayLike(imgIds) else [imgIds]
        catIds = catIds if _isArrayLike(catIds) else [catIds]
        if len(imgIds) == len(catIds) == len(areaRng) == 0:
            anns = self.dataset['annotations']
        else:
            if not len(imgIds) == 0:
                lists = [self.imgToAnns[imgId] for imgId in imgIds if imgId in self.imgToAnns]
                anns = list(itertools.chain.from_iterable(lists))
            else:
                anns = self.dataset['annotations']
            anns = anns if len(catIds) == 0 else [ann for ann in anns if ann['category_id'] in catIds]
            anns = anns if len(areaRng) == 0 else [ann for ann in anns if ann['area'] > areaRng[0] and ann['area'] < areaRng[1]]
        if not iscrowd == None:
            ids = [ann['id'] for ann in anns if ann['iscrowd'] == iscrowd]
        else:
            ids = [ann['id'] for ann in anns]
        return ids

    def getCatIds(self, catNms=[], supNms=[], catIds=[]):           # coco.py l.157-177
        catNms = catNms if _isArrayLike(catNms) else [catNms]
        supNms = supNms if _isArrayLike(supNms) else [supNms]
        catIds = catIds if _isArrayLike(catIds) else [catIds]
        if len(catNms) == len(supNms) == len(catIds) == 0:
            cats = self.dataset['categories']
        else:
            cats = self.dataset['categories']
            cats = cats if len(catNms) == 0 else [cat for cat in cats if cat['name'] in catNms]
            cats = cats if len(supNms) == 0 else [cat for cat in cats if cat['supercategory'] in supNms]
            cats = cats if len(catIds) == 0 else [cat for cat in cats if cat['id'] in catIds]
        ids = [cat['id'] for cat in cats]
        return ids

    def loadAnns(self, ids=[]):                                     # coco.py l.200-209
        if _isArrayLike(ids):
            return [self.anns[id] for id in ids]
        elif type(ids) == int:
            return [self.anns[ids]]

    def loadCats(self, ids=[]):                                     # coco.py l.211-220
        if _isArrayLike(ids):
            return [self.cats[id] for id in ids]
        elif type(ids) == int:
            return [self.cats[ids]]

    def loadImgs(self, ids=[]):                                     # coco.py l.222-231
        if _isArrayLike(ids):
            return [self.imgs[id] for id in ids]
        elif type(ids) == int:
            return [self.imgs[ids]]


# ------------------------------------------------------------------------------ vsrl_eval.py
class VCOCOeval(object):

    def __init__(self, vsrl_annot, coco_annot, split_ids):          # l.29-43
        """Input (in memory, where the original takes file names):
        vsrl_annot: the parsed vcoco_*.json list
        coco_annot: the parsed instances_*.json dict
        split_ids: the split's image ids (the original: np.loadtxt of the .ids file, floats)
        """
        self.COCO = COCO(coco_annot)
        self.VCOCO = _load_vcoco(vsrl_annot)
        self.image_ids = np.asarray(split_ids, dtype=np.float64)     # np.loadtxt gives floats (l.38)
        # simple check
        assert np.all(np.equal(np.sort(np.unique(self.VCOCO[0]['image_id'])), self.image_ids))

        self._init_coco()
        self._init_vcoco()
        self.npos = None
        self.agent_ap = None
        self.agent_map = None
        self.role_ap = {}
        self.role_map = {}

    def _init_vcoco(self):                                          # l.46-52
        actions = [x['action_name'] for x in self.VCOCO]
        roles = [x['role_name'] for x in self.VCOCO]
        self.actions = actions
        self.actions_to_id_map = {v: i for i, v in enumerate(self.actions)}
        self.num_actions = len(self.actions)
        self.roles = roles

    def _init_coco(self):                                           # l.55-64
        category_ids = self.COCO.getCatIds()
        categories = [c['name'] for c in self.COCO.loadCats(category_ids)]
        self.category_to_id_map = dict(zip(categories, category_ids))
        self.classes = ['__background__'] + categories
        self.num_classes = len(self.classes)
        self.json_category_id_to_contiguous_id = {
            v: i + 1 for i, v in enumerate(self.COCO.getCatIds())}
        self.contiguous_category_id_to_json_id = {
            v: k for k, v in self.json_category_id_to_contiguous_id.items()}

    def _get_vcocodb(self):                                         # l.67-82 (the disabled print left out)
        vcocodb = copy.deepcopy(self.COCO.loadImgs(self.image_ids.tolist()))
        for entry in vcocodb:
            self._prep_vcocodb_entry(entry)
            self._add_gt_annotations(entry)
        return vcocodb

    def _prep_vcocodb_entry(self, entry):                           # l.85-90
        entry['boxes'] = np.empty((0, 4), dtype=np.float32)
        entry['is_crowd'] = np.empty((0), dtype=bool)                # NumPy 2: np.bool -> bool
        entry['gt_classes'] = np.empty((0), dtype=np.int32)
        entry['gt_actions'] = np.empty((0, self.num_actions), dtype=np.int32)
        entry['gt_role_id'] = np.empty((0, self.num_actions, 2), dtype=np.int32)

    def _add_gt_annotations(self, entry):                           # l.93-139
        ann_ids = self.COCO.getAnnIds(imgIds=entry['id'], iscrowd=None)
        objs = self.COCO.loadAnns(ann_ids)
        # Sanitize bboxes -- some are invalid
        valid_objs = []
        valid_ann_ids = []
        width = entry['width']
        height = entry['height']
        for i, obj in enumerate(objs):
            if 'ignore' in obj and obj['ignore'] == 1:
                continue
            # Convert form x1, y1, w, h to x1, y1, x2, y2
            x1 = obj['bbox'][0]
            y1 = obj['bbox'][1]
            x2 = x1 + np.maximum(0., obj['bbox'][2] - 1.)
            y2 = y1 + np.maximum(0., obj['bbox'][3] - 1.)
            x1, y1, x2, y2 = clip_xyxy_to_image(
                x1, y1, x2, y2, height, width)
            # Require non-zero seg area and more than 1x1 box size
            if obj['area'] > 0 and x2 > x1 and y2 > y1:
                obj['clean_bbox'] = [x1, y1, x2, y2]
                valid_objs.append(obj)
                valid_ann_ids.append(ann_ids[i])
        num_valid_objs = len(valid_objs)
        assert num_valid_objs == len(valid_ann_ids)

        boxes = np.zeros((num_valid_objs, 4), dtype=entry['boxes'].dtype)
        is_crowd = np.zeros((num_valid_objs), dtype=entry['is_crowd'].dtype)
        gt_classes = np.zeros((num_valid_objs), dtype=entry['gt_classes'].dtype)
        gt_actions = -np.ones((num_valid_objs, self.num_actions), dtype=entry['gt_actions'].dtype)
        gt_role_id = -np.ones((num_valid_objs, self.num_actions, 2), dtype=entry['gt_role_id'].dtype)

        for ix, obj in enumerate(valid_objs):
            cls = self.json_category_id_to_contiguous_id[obj['category_id']]
            boxes[ix, :] = obj['clean_bbox']
            gt_classes[ix] = cls
            is_crowd[ix] = obj['iscrowd']

            gt_actions[ix, :], gt_role_id[ix, :, :] = \
                self._get_vsrl_data(valid_ann_ids[ix],
                                    valid_ann_ids, valid_objs)

        entry['boxes'] = np.append(entry['boxes'], boxes, axis=0)
        entry['gt_classes'] = np.append(entry['gt_classes'], gt_classes)
        entry['is_crowd'] = np.append(entry['is_crowd'], is_crowd)
        entry['gt_actions'] = np.append(entry['gt_actions'], gt_actions, axis=0)
        entry['gt_role_id'] = np.append(entry['gt_role_id'], gt_role_id, axis=0)

    def _get_vsrl_data(self, ann_id, ann_ids, objs):                # l.142-168
        """ Get VSRL data for ann_id."""
        action_id = -np.ones((self.num_actions), dtype=np.int32)
        role_id = -np.ones((self.num_actions, 2), dtype=np.int32)
        # check if ann_id in vcoco annotations
        in_vcoco = np.where(self.VCOCO[0]['ann_id'] == ann_id)[0]
        if in_vcoco.size > 0:
            action_id[:] = 0
            role_id[:] = -1
        else:
            return action_id, role_id
        for i, x in enumerate(self.VCOCO):
            assert x['action_name'] == self.actions[i]
            has_label = np.where(np.logical_and(x['ann_id'] == ann_id, x['label'] == 1))[0]
            if has_label.size > 0:
                action_id[i] = 1
                assert has_label.size == 1
                rids = x['role_object_id'][has_label]
                assert rids[0, 0] == ann_id
                for j in range(1, rids.shape[1]):
                    if rids[0, j] == 0:
                        # no role
                        continue
                    aid = np.where(ann_ids == rids[0, j])[0]
                    assert aid.size > 0
                    role_id[i, j - 1] = aid.item()                  # NumPy 2: was `= aid` (size-1 array)
        return action_id, role_id

    def _collect_detections_for_image(self, dets, image_id):        # l.171-187
        agents = np.empty((0, 4 + self.num_actions), dtype=np.float32)
        roles = np.empty((0, 5 * self.num_actions, 2), dtype=np.float32)
        for det in dets:
            if det['image_id'] == image_id:
                this_agent = np.zeros((1, 4 + self.num_actions), dtype=np.float32)
                this_role = np.zeros((1, 5 * self.num_actions, 2), dtype=np.float32)
                this_agent[0, :4] = det['person_box']
                for aid in range(self.num_actions):
                    for j, rid in enumerate(self.roles[aid]):
                        if rid == 'agent':
                            this_agent[0, 4 + aid] = det[self.actions[aid] + '_' + rid]
                        else:
                            this_role[0, 5 * aid: 5 * aid + 5, j - 1] = det[self.actions[aid] + '_' + rid]
                agents = np.concatenate((agents, this_agent), axis=0)
                roles = np.concatenate((roles, this_role), axis=0)
        return agents, roles

    def _do_eval(self, load_detections, ovr_thresh=0.5):             # l.190-194
        """``load_detections()`` returns the detections list; the original unpickles
        ``detections_file`` in each of the three evaluations."""
        vcocodb = self._get_vcocodb()
        self._do_agent_eval(vcocodb, load_detections, ovr_thresh=ovr_thresh)
        self._do_role_eval(vcocodb, load_detections, ovr_thresh=ovr_thresh, eval_type='scenario_1')
        self._do_role_eval(vcocodb, load_detections, ovr_thresh=ovr_thresh, eval_type='scenario_2')

    def _do_role_eval(self, vcocodb, load_detections, ovr_thresh=0.5, eval_type='scenario_1'):   # l.197-326

        dets = load_detections()                                    # l.199-200: pickle.load(f)

        tp = [[[] for r in range(2)] for a in range(self.num_actions)]
        fp = [[[] for r in range(2)] for a in range(self.num_actions)]
        sc = [[[] for r in range(2)] for a in range(self.num_actions)]

        npos = np.zeros((self.num_actions), dtype=np.float32)

        for i in range(len(vcocodb)):
            image_id = vcocodb[i]['id']
            gt_inds = np.where(vcocodb[i]['gt_classes'] == 1)[0]
            # person boxes
            gt_boxes = vcocodb[i]['boxes'][gt_inds]
            gt_actions = vcocodb[i]['gt_actions'][gt_inds]
            # some peorson instances don't have annotated actions
            # we ignore those instances
            ignore = np.any(gt_actions == -1, axis=1)
            assert np.all(gt_actions[np.where(ignore == True)[0]] == -1)

            for aid in range(self.num_actions):
                npos[aid] += np.sum(gt_actions[:, aid] == 1)

            pred_agents, pred_roles = self._collect_detections_for_image(dets, image_id)

            for aid in range(self.num_actions):
                if len(self.roles[aid]) < 2:
                    # if action has no role, then no role AP computed
                    continue

                for rid in range(len(self.roles[aid]) - 1):

                    # keep track of detected instances for each action for each role
                    covered = np.zeros((gt_boxes.shape[0]), dtype=bool)   # NumPy 2: np.bool -> bool

                    # get gt roles for action and role
                    gt_role_inds = vcocodb[i]['gt_role_id'][gt_inds, aid, rid]
                    gt_roles = -np.ones_like(gt_boxes)
                    for j in range(gt_boxes.shape[0]):
                        if gt_role_inds[j] > -1:
                            gt_roles[j] = vcocodb[i]['boxes'][gt_role_inds[j]]

                    agent_boxes = pred_agents[:, :4]
                    role_boxes = pred_roles[:, 5 * aid: 5 * aid + 4, rid]
                    agent_scores = pred_roles[:, 5 * aid + 4, rid]

                    valid = np.where(np.isnan(agent_scores) == False)[0]
                    agent_scores = agent_scores[valid]
                    agent_boxes = agent_boxes[valid, :]
                    role_boxes = role_boxes[valid, :]

                    idx = agent_scores.argsort()[::-1]

                    for j in idx:
                        pred_box = agent_boxes[j, :]
                        overlaps = get_overlap(gt_boxes, pred_box)

                        # matching happens based on the person
                        jmax = overlaps.argmax()
                        ovmax = overlaps.max()

                        # if matched with an instance with no annotations
                        # continue
                        if ignore[jmax]:
                            continue

                        # overlap between predicted role and gt role
                        if np.all(gt_roles[jmax, :] == -1):  # if no gt role
                            if eval_type == 'scenario_1':
                                if np.all(role_boxes[j, :] == 0.0) or np.all(np.isnan(role_boxes[j, :])):
                                    # if no role is predicted, mark it as correct role overlap
                                    ov_role = 1.0
                                else:
                                    # if a role is predicted, mark it as false
                                    ov_role = 0.0
                            elif eval_type == 'scenario_2':
                                # if no gt role, role prediction is always correct, irrespective of the actual predition
                                ov_role = 1.0
                            else:
                                raise ValueError('Unknown eval type')
                        else:
                            ov_role = get_overlap(gt_roles[jmax, :].reshape((1, 4)), role_boxes[j, :])

                        is_true_action = (gt_actions[jmax, aid] == 1)
                        sc[aid][rid].append(agent_scores[j])
                        if is_true_action and (ovmax >= ovr_thresh) and (ov_role >= ovr_thresh):
                            if covered[jmax]:
                                fp[aid][rid].append(1)
                                tp[aid][rid].append(0)
                            else:
                                fp[aid][rid].append(0)
                                tp[aid][rid].append(1)
                                covered[jmax] = True
                        else:
                            fp[aid][rid].append(1)
                            tp[aid][rid].append(0)

        # compute ap for each action
        role_ap = np.zeros((self.num_actions, 2), dtype=np.float32)
        role_ap[:] = np.nan
        for aid in range(self.num_actions):
            if len(self.roles[aid]) < 2:
                continue
            for rid in range(len(self.roles[aid]) - 1):
                a_fp = np.array(fp[aid][rid], dtype=np.float32)
                a_tp = np.array(tp[aid][rid], dtype=np.float32)
                a_sc = np.array(sc[aid][rid], dtype=np.float32)
                # sort in descending score order
                idx = a_sc.argsort()[::-1]
                a_fp = a_fp[idx]
                a_tp = a_tp[idx]
                a_sc = a_sc[idx]

                a_fp = np.cumsum(a_fp)
                a_tp = np.cumsum(a_tp)
                rec = a_tp / float(npos[aid])
                # check
                assert (np.amax(rec) <= 1)
                prec = a_tp / np.maximum(a_tp + a_fp, np.finfo(np.float64).eps)
                role_ap[aid, rid] = voc_ap(rec, prec)

        print('---------Reporting Role AP (%)------------------')
        for aid in range(self.num_actions):
            if len(self.roles[aid]) < 2: continue
            for rid in range(len(self.roles[aid]) - 1):
                print('{: >23}: AP = {:0.2f} (#pos = {:d})'.format(self.actions[aid] + '-' + self.roles[aid][rid + 1], role_ap[aid, rid] * 100.0, int(npos[aid])))
        print('Average Role [%s] AP = %.2f' % (eval_type, np.nanmean(role_ap) * 100.00))
        print('---------------------------------------------')
        self.role_ap[eval_type] = role_ap                           # kept (not in the original)
        self.role_map[eval_type] = np.nanmean(role_ap)

    def _do_agent_eval(self, vcocodb, load_detections, ovr_thresh=0.5):   # l.329-423

        dets = load_detections()                                    # l.331-332: pickle.load(f)

        tp = [[] for a in range(self.num_actions)]
        fp = [[] for a in range(self.num_actions)]
        sc = [[] for a in range(self.num_actions)]

        npos = np.zeros((self.num_actions), dtype=np.float32)

        for i in range(len(vcocodb)):
            image_id = vcocodb[i]['id']
            gt_inds = np.where(vcocodb[i]['gt_classes'] == 1)[0]
            # person boxes
            gt_boxes = vcocodb[i]['boxes'][gt_inds]
            gt_actions = vcocodb[i]['gt_actions'][gt_inds]
            # some peorson instances don't have annotated actions
            # we ignore those instances
            ignore = np.any(gt_actions == -1, axis=1)

            for aid in range(self.num_actions):
                npos[aid] += np.sum(gt_actions[:, aid] == 1)

            pred_agents, _ = self._collect_detections_for_image(dets, image_id)

            for aid in range(self.num_actions):

                # keep track of detected instances for each action
                covered = np.zeros((gt_boxes.shape[0]), dtype=bool)     # NumPy 2: np.bool -> bool

                agent_scores = pred_agents[:, 4 + aid]
                agent_boxes = pred_agents[:, :4]
                # remove NaNs
                valid = np.where(np.isnan(agent_scores) == False)[0]
                agent_scores = agent_scores[valid]
                agent_boxes = agent_boxes[valid, :]

                # sort in descending order
                idx = agent_scores.argsort()[::-1]

                for j in idx:
                    pred_box = agent_boxes[j, :]
                    overlaps = get_overlap(gt_boxes, pred_box)

                    jmax = overlaps.argmax()
                    ovmax = overlaps.max()

                    # if matched with an instance with no annotations
                    # continue
                    if ignore[jmax]:
                        continue

                    is_true_action = (gt_actions[jmax, aid] == 1)

                    sc[aid].append(agent_scores[j])
                    if is_true_action and (ovmax >= ovr_thresh):
                        if covered[jmax]:
                            fp[aid].append(1)
                            tp[aid].append(0)
                        else:
                            fp[aid].append(0)
                            tp[aid].append(1)
                            covered[jmax] = True
                    else:
                        fp[aid].append(1)
                        tp[aid].append(0)

        # compute ap for each action
        agent_ap = np.zeros((self.num_actions), dtype=np.float32)
        for aid in range(self.num_actions):

            a_fp = np.array(fp[aid], dtype=np.float32)
            a_tp = np.array(tp[aid], dtype=np.float32)
            a_sc = np.array(sc[aid], dtype=np.float32)
            # sort in descending score order
            idx = a_sc.argsort()[::-1]
            a_fp = a_fp[idx]
            a_tp = a_tp[idx]
            a_sc = a_sc[idx]

            a_fp = np.cumsum(a_fp)
            a_tp = np.cumsum(a_tp)
            rec = a_tp / float(npos[aid])
            # check
            assert (np.amax(rec) <= 1)
            prec = a_tp / np.maximum(a_tp + a_fp, np.finfo(np.float64).eps)
            agent_ap[aid] = voc_ap(rec, prec)

        print('---------Reporting Agent AP (%)------------------')
        for aid in range(self.num_actions):
            print('{: >20}: AP = {:0.2f} (#pos = {:d})'.format(self.actions[aid], agent_ap[aid] * 100.0, int(npos[aid])))
        print('Average Agent AP = %.2f' % (np.nansum(agent_ap) * 100.00 / self.num_actions))
        print('---------------------------------------------')
        self.npos = npos                                            # kept (not in the original)
        self.agent_ap = agent_ap
        self.agent_map = np.nansum(agent_ap) / self.num_actions


def _load_vcoco(vsrl_data):                                         # l.426-435 (json.load done by the caller)
    vsrl_data = copy.deepcopy(vsrl_data)
    for i in range(len(vsrl_data)):
        vsrl_data[i]['role_object_id'] = \
            np.array(vsrl_data[i]['role_object_id']).reshape((len(vsrl_data[i]['role_name']), -1)).T
        for j in ['ann_id', 'label', 'image_id']:
            vsrl_data[i][j] = np.array(vsrl_data[i][j]).reshape((-1, 1))
    return vsrl_data


def clip_xyxy_to_image(x1, y1, x2, y2, height, width):             # l.438-443
    x1 = np.minimum(width - 1., np.maximum(0., x1))
    y1 = np.minimum(height - 1., np.maximum(0., y1))
    x2 = np.minimum(width - 1., np.maximum(0., x2))
    y2 = np.minimum(height - 1., np.maximum(0., y2))
    return x1, y1, x2, y2


def get_overlap(boxes, ref_box):                                    # l.446-461
    ixmin = np.maximum(boxes[:, 0], ref_box[0])
    iymin = np.maximum(boxes[:, 1], ref_box[1])
    ixmax = np.minimum(boxes[:, 2], ref_box[2])
    iymax = np.minimum(boxes[:, 3], ref_box[3])
    iw = np.maximum(ixmax - ixmin + 1., 0.)
    ih = np.maximum(iymax - iymin + 1., 0.)
    inters = iw * ih

    # union
    uni = ((ref_box[2] - ref_box[0] + 1.) * (ref_box[3] - ref_box[1] + 1.) +
           (boxes[:, 2] - boxes[:, 0] + 1.) *
           (boxes[:, 3] - boxes[:, 1] + 1.) - inters)

    overlaps = inters / uni
    return overlaps


def voc_ap(rec, prec):                                              # l.464-484
    """ ap = voc_ap(rec, prec)
    Compute VOC AP given precision and recall.
    [as defined in PASCAL VOC]
    """
    # correct AP calculation
    # first append sentinel values at the end
    mrec = np.concatenate(([0.], rec, [1.]))
    mpre = np.concatenate(([0.], prec, [0.]))

    # compute the precision envelope
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])

    # to calculate area under PR curve, look for points
    # where X axis (recall) changes value
    i = np.where(mrec[1:] != mrec[:-1])[0]

    # and sum (\Delta recall) * prec
    ap = np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1])
    return ap
