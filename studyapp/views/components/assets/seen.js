// Seen before answered (shared by the answer components): a screen takes a press
// only once its item has been fully drawn for the study's floor (`data.min_seen_ms`), and a press
// that records rows (the pair, imSitu's verbs, CrossHOI's candidates) only once each of those rows
// has been in view, uncovered, for that long. A press before that (the second tap of a double
// tap, a double click, a fast second key) is dropped: said in a cue that stays readable, and
// counted with the next action (`not_applied`). A row not yet in view is brought into view.
//
// "In view, uncovered" is hit-tested: points down the middle of the row must each have been the
// topmost element there (`elementFromPoint`), so a row under the sticky answer bar, Streamlit's
// header or below the fold is not seen. It is checked when the screen is drawn, on every scroll
// and resize, when an IntersectionObserver sees a row move, and twice a second meanwhile.
import { KEYS, keyName, notApplied } from "./common.js";

const TOAST_MS = 2500;  // a cue stays this long after the last dropped press: long enough to read

// The page's cue for dropped presses, outside the screens that replace each other, so that it
// stays readable when the next screen comes at once.
export function toast(text) {
  let box = document.getElementById("studyapp-toast");
  if (!box) {
    box = document.createElement("div");
    box.id = "studyapp-toast";
    box.setAttribute("role", "status");
    document.body.appendChild(box);
  }
  box.textContent = text;
  box.dataset.shownAt = String(performance.now());
  box.classList.add("shown");
  clearTimeout(KEYS.toastTimer);
  KEYS.toastTimer = setTimeout(() => {
    box.classList.remove("shown");
    box.textContent = "";
  }, TOAST_MS);
}

// The name of a press for the cue and the count: the key, or "tap" / "click" for a pointer.
function pressName(event) {
  if (!event) return "press";
  if (event.key !== undefined) return keyName(event.key);
  return event.pointerType === "touch" || event.pointerType === "pen" ? "tap" : "click";
}

// Scroll `row` into the part of the screen nothing covers: below Streamlit's header, above the
// screen's sticky answer bar (which may take half a phone's height).
export function bringIntoView(root, row) {
  const bar = root.querySelector(".sticky-bar") || root.querySelector(".controls");
  const header = document.querySelector('[data-testid="stHeader"]');
  row.style.scrollMarginBottom = `${(bar ? bar.getBoundingClientRect().height : 0) + 8}px`;
  row.style.scrollMarginTop = `${(header ? Math.max(header.getBoundingClientRect().bottom, 0) : 0) + 8}px`;
  row.scrollIntoView({ block: "nearest" });
}

export function seenGate(root, data, cue) {
  const floor = Math.max(Number(data.min_seen_ms ?? 300), 0);
  const POINTS = 3;
  let rows = [];
  let drawnAt = null;
  const hits = new Map();    // row -> points seen so far
  const seenAt = new Map();  // row -> when its last point was seen
  let timer = null, observer = null, floorTimer = null;
  // on the screen, for tests and tools: "soon" (under the floor), "unseen" (a row not yet in
  // view) or "yes" (an answer is taken)
  const mark = () => {
    if (drawnAt === null || !root.isConnected || root.seenGate !== gate) return;
    const all = rows.every((row) => seenAt.has(row));
    const since = Math.max(drawnAt, ...rows.map((row) => seenAt.get(row) ?? -Infinity));
    root.dataset.answerable = !all ? "unseen" : performance.now() - since >= floor ? "yes" : "soon";
    if (root.dataset.answerable === "soon") {
      clearTimeout(floorTimer);
      floorTimer = setTimeout(mark, floor - (performance.now() - since) + 1);
    }
  };
  const check = (at) => {  // `at`: when the rows were as they are now (default: now)
    if (drawnAt === null || !root.isConnected) return;
    const now = typeof at === "number" ? at : performance.now();
    rows.forEach((row) => {
      if (seenAt.has(row)) return;
      const r = row.getBoundingClientRect();
      if (!r.width || !r.height) return;
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const got = hits.get(row) || new Set();
      for (let k = 0; k < POINTS; k += 1) {
        const y = r.top + Math.min(4, r.height / 2) + (k * (r.height - 2 * Math.min(4, r.height / 2))) / (POINTS - 1);
        if (y < 0 || y >= innerHeight || r.left + r.width / 2 < 0 || r.left + r.width / 2 >= innerWidth) continue;
        const top = document.elementFromPoint(x, y);
        if (top && row.contains(top)) got.add(k);
      }
      hits.set(row, got);
      if (got.size === POINTS) seenAt.set(row, now);
    });
    mark();
    if (rows.every((row) => seenAt.has(row))) stopWatching();
  };
  const onScroll = () => requestAnimationFrame(check);
  const stopWatching = () => {
    clearInterval(timer);
    timer = null;
    if (observer) observer.disconnect();
    observer = null;
    document.removeEventListener("scroll", onScroll, true);
    window.removeEventListener("resize", onScroll);
  };
  const say = (text) => {
    if (cue) cue.textContent = text;
    toast(text);
  };
  const gate = {
    // the rows a press may record (elements of the screen): checked from `start` on
    track(elements) { rows = [...elements]; },
    start() {
      // the screen's marks are this gate's from now on: a superseded screen whose cleanup
      // Streamlit has not run (after a reconnect) writes none
      root.seenGate = gate;
      drawnAt = KEYS.shownAt ?? performance.now();  // when the screen was put in place (`present`)
      check(drawnAt);  // what is in view now has been since then (nothing has scrolled meanwhile)
      if (rows.every((row) => seenAt.has(row))) return;
      document.addEventListener("scroll", onScroll, { capture: true, passive: true });
      window.addEventListener("resize", onScroll);
      timer = setInterval(check, 500);
      if (window.IntersectionObserver) {
        observer = new IntersectionObserver(onScroll, { threshold: [0, 0.5, 1] });
        rows.forEach((row) => observer.observe(row));
      }
    },
    stop() { stopWatching(); clearTimeout(floorTimer); },
    seenMs() { return drawnAt === null ? 0 : Math.round(performance.now() - drawnAt); },
    allInView() { check(); return rows.every((row) => seenAt.has(row)); },
    // Whether the press `event` may act now; `needs`: the rows it records (all of them for an
    // answer, one for a mark, none for Back). Else it is dropped, said and counted.
    admit(event, needs = []) {
      check();
      const name = pressName(event);
      const unseen = needs.filter((row) => !seenAt.has(row));
      if (drawnAt !== null && unseen.length) {
        notApplied.add(name, data.item_id);
        bringIntoView(root, unseen[0]);
        setTimeout(check, 50);
        const what = unseen.map((row) => row.dataset.seenName).filter(Boolean);
        say(`Nothing was recorded for that ${name}: ${what.length ? what.join(", ") : "part of this item"} ` +
            `${unseen.length === 1 ? "was" : "were"} not yet in view. Look at ${unseen.length === 1 ? "it" : "them"}, then answer.`);
        return false;
      }
      const since = Math.max(drawnAt ?? Infinity, ...needs.map((row) => seenAt.get(row) ?? -Infinity));
      const waited = performance.now() - since;
      if (!(waited >= floor)) {
        notApplied.add(name, data.item_id);
        say(`Too fast — nothing was recorded for that ${name}: ` +
            `${needs.length ? "this" : "the"} item appeared just now. Read it, then answer.`);
        return false;
      }
      return true;
    },
  };
  return gate;
}
