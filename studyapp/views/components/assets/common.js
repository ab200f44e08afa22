// Shared by the answer components: each component's module imports what it uses from here (no
// build step: the browser loads the modules beside this file, each once per page).
//
// Delivery: an answer made while the server is unreachable (restart, network loss) is not
// lost. It is kept in sessionStorage until a server run shows it was seen (`data.seen_nonce`),
// and sent again when the connection is back or the controls of the same item are mounted
// again. Meanwhile the controls say "reconnecting…" and Streamlit's developer "Connection
// error" dialog is hidden.
import { announce } from "./live.js";
import { toast } from "./seen.js";

const PENDING = "studyapp.pending-answer";
export const CANT_JUDGE = "cant_judge";  // the "can't judge" answer (studyapp.core.models.CANT_JUDGE)
const OFFLINE_CLASS = "studyapp-offline";
const NOT_TYPED = ["checkbox", "radio", "button", "submit", "range", "reset"];

export function typingInto(target) {
  if (!target) return false;
  if (target.isContentEditable || ["TEXTAREA", "SELECT"].includes(target.tagName)) return true;
  return target.tagName === "INPUT" && !NOT_TYPED.includes(target.type);
}

// Enter or Space on a focused control (reached with Tab) does what a click on it does: the
// browser's own activation, never the page's key for Enter.
const ACTIVATED = ["BUTTON", "A", "SUMMARY", "SELECT", "TEXTAREA"];
export function activatesFocused(event) {
  if (event.key !== "Enter" && event.key !== " ") return false;
  const t = event.target;
  if (!t || t === document.body || t === document.documentElement) return false;
  if (ACTIVATED.includes(t.tagName) || t.tagName === "INPUT") return true;
  const role = t.getAttribute && t.getAttribute("role");
  return Boolean(role && ["button", "checkbox", "switch", "tab", "link", "option", "menuitem"].includes(role));
}

// Keys pressed while the screen shows an answer being saved (or while the next screen is put in
// place) cannot reach that item (it is answered) and must not reach the next one, which the
// annotator has not seen: they are dropped, said so at once on the screen where they were
// pressed ("too fast — nothing was recorded"), never on the next one, and sent with the next
// action (``not_applied``) so the server counts them in the page events.
const NOT_APPLIED = "studyapp.not-applied";
export const notApplied = {
  list() { return JSON.parse(sessionStorage.getItem(NOT_APPLIED) || "[]"); },
  add(key, item) {
    const all = notApplied.list();
    all.push({ key, item });
    sessionStorage.setItem(NOT_APPLIED, JSON.stringify(all));
    window.__studyappNotApplied = (window.__studyappNotApplied || 0) + 1;
  },
  clear() { sessionStorage.removeItem(NOT_APPLIED); },
};

export function keyName(key) {
  return key === " " ? "Space" : key;
}

// A multi-key answer (marks, then Enter) is bound to the screen its keys were typed on: when a
// key of such a group was dropped on the screen that was saving, the rest of that group (its
// keys up to Enter, or until a pause of GROUP_PAUSE_MS after both the last dropped key and the
// next screen's appearance: nobody reads a new screen faster) is dropped on the next screen
// too, so that keys typed for two items never make one answer.
const GROUP_PAUSE_MS = 800;

// The components' style sheets, beside this module and served like it: each linked into the page
// once (the browser fetches and caches it), and no screen is shown before they have loaded.
const sheets = new Map();  // URL -> its load (or failure)
export function linkStyles(names) {
  for (const name of names) {
    const href = new URL(name, import.meta.url).href;
    if (sheets.has(href)) continue;
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    sheets.set(href, new Promise((done) => {
      link.addEventListener("load", done, { once: true });
      link.addEventListener("error", done, { once: true });
    }));
    document.head.appendChild(link);
  }
}

function scrollToTop(root) {  // Streamlit scrolls its main container, not the window
  for (let node = root; node; node = node.parentElement) node.scrollTop = 0;
  window.scrollTo(0, 0);
}

// The optional comment sent with an answer (spec: answers.comments), or null when the study
// takes none; Esc leaves the box so that the keys answer again. Text typed and not sent yet
// stays through a new run of the page on the same item (the instructions opened or closed);
// sending an action ends it.
let commentDraft = null;  // { item_id, text }
export function commentBox(data) {
  if (!data.comments) return null;
  const box = document.createElement("textarea");
  box.className = "comment";
  box.rows = 2;
  box.maxLength = 2000;
  box.placeholder = "Optional comment, sent with your answer (Esc leaves the box)";
  const draft = commentDraft && commentDraft.item_id === data.item_id ? commentDraft.text : null;
  box.value = draft ?? (data.comment || "");
  box.addEventListener("input", () => { commentDraft = { item_id: data.item_id, text: box.value }; });
  box.addEventListener("keydown", (event) => { if (event.key === "Escape") box.blur(); });
  return box;
}

export function newNonce() {
  return `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

function connectionErrorShown() {
  return [...document.querySelectorAll('[data-testid="stDialog"] h2')]
    .some((h) => h.textContent.trim() === "Connection error");
}

// A component whose screen the answer route may replace without a run of the page: `mount(
// component, redraw)` draws one screen and returns its cleanup; `redraw(data)` puts the next
// screen (the route's data, in the shape of the page's) in its place.
export function routed(mount) {
  return (component) => {
    const { setTriggerValue, parentElement } = component;
    let stop = null;
    const redraw = (data) => {
      if (stop) stop();
      stop = mount({ data, setTriggerValue, parentElement }, redraw);
    };
    redraw(component.data);
    return () => { if (stop) stop(); };
  };
}

// `onConnection(offline)` runs on every change of the connection; `redraw(data)` draws the
// screen the answer route returns. Returns { transmit(action), resendKept() -> bool, stop() }.
//
// An answer goes to the answer route when the screen offers it (`data.route`: its address,
// the annotator and the annotator's key): the route stores it and returns the next screen's
// data, drawn in place, or `{page: true}` (the answer stored; what follows is a page: the end,
// a paused study), and the page is run. Any other reply, or none, sends the same press the
// page's own way (a Streamlit run), which stores it or says why not.
const RESEND_MS = 4000;
export function delivery(data, setTriggerValue, onConnection, redraw = null) {
  let offline = false;
  let stopped = false;
  const kept = () => JSON.parse(sessionStorage.getItem(PENDING) || "null");
  const viaPage = (action) => {
    setTriggerValue("action", action);
    resendUnanswered(action.nonce, RESEND_MS);
  };
  const viaRoute = async (action) => {
    let reply = null;
    try {
      const response = await fetch(data.route.url, {
        method: "POST", credentials: "same-origin", cache: "no-store",
        headers: { "Content-Type": "application/json", "X-Studyapp-Key": data.route.key },
        body: JSON.stringify({ ...action, annotator: data.route.annotator }),
      });
      if (response.ok) reply = await response.json();
    } catch (error) {
      reply = null;
    }
    if (stopped) return;  // the page drew another screen meanwhile
    if (reply && (reply.data || reply.page)) {
      sessionStorage.removeItem(PENDING);
      if (reply.data) redraw(reply.data);
      else setTriggerValue("action", { kind: "refresh", item_id: action.item_id, nonce: action.nonce });
      return;
    }
    viaPage(action);
  };
  const transmit = (action) => {
    commentDraft = null;
    if (!("not_applied" in action)) {
      action.not_applied = notApplied.list().map((p) => p.key);
      notApplied.clear();
    }
    sessionStorage.setItem(PENDING, JSON.stringify(action));
    if (data.route && redraw && action.kind === "answer" && !offline) viaRoute(action);
    else viaPage(action);
  };
  // no new screen yet: the press may have gone to an instance that died before storing it and
  // the tab reconnected to another without Streamlit's "Connection error" state; send it again
  // (the server applies a nonce once per session, and the same answer again stores nothing)
  let resendTimer = null;
  const resendUnanswered = (nonce, wait) => {
    clearTimeout(resendTimer);
    resendTimer = setTimeout(() => {
      const answer = kept();
      if (!answer || answer.nonce !== nonce) return;
      setTriggerValue("action", answer);
      resendUnanswered(nonce, wait * 2);
    }, wait);
  };
  const check = () => {
    const wasOffline = offline;
    offline = connectionErrorShown();
    document.documentElement.classList.toggle(OFFLINE_CLASS, offline);
    const answer = kept();
    if (wasOffline && !offline && answer && answer.item_id === data.item_id) transmit(answer);
    onConnection(offline);
  };
  // Streamlit adds its dialog as a child of <body>: watching only that list cannot loop
  const observer = new MutationObserver(check);
  return {
    transmit,
    resendKept() {
      const answer = kept();
      if (answer && answer.item_id === data.item_id && answer.nonce !== data.seen_nonce) {
        transmit(answer);
        return true;
      }
      sessionStorage.removeItem(PENDING);
      return false;
    },
    start() {
      check();
      observer.observe(document.body, { childList: true });
    },
    stop() { stopped = true; observer.disconnect(); clearTimeout(resendTimer); },
  };
}

// ------------------------------------------------------------------ one atomic item screen
// The item's content (progress, notices, text, glosses, images, boxes) comes in the same data
// as its controls (`data.screen`) and is drawn by the same component: the new screen is built
// off-page, its images decoded, and only then put in place of the old one in one step, with
// its controls live from that moment. Until then the old screen stays, locked.
//
// Content is a tree of nodes `[tag, attributes, ...children]` (children: nodes or strings),
// built with createElement / textContent only: a few tags, class and alt attributes, and
// images only from data:image/ URLs; `["boxes-toggle", {}]` is the "Show the boxes" switch.
const TAGS = new Set(["div", "span", "p", "strong", "em", "code", "h3", "figure", "figcaption", "img"]);
let boxesHidden = false;  // the "Show the boxes" choice holds across items

function buildNodes(node, screenRoot) {
  if (typeof node === "string") return document.createTextNode(node);
  const [tag, attrs, ...children] = node;
  if (tag === "boxes-toggle") {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "boxes-toggle";
    const show = () => {
      screenRoot.classList.toggle("no-boxes", boxesHidden);
      b.textContent = boxesHidden ? "Show the boxes" : "Hide the boxes";
      b.setAttribute("aria-pressed", String(!boxesHidden));
    };
    b.addEventListener("mousedown", (e) => e.preventDefault());
    b.addEventListener("click", () => { boxesHidden = !boxesHidden; show(); });
    show();
    return b;
  }
  if (!TAGS.has(tag)) throw new Error(`unknown tag ${tag}`);
  const el = document.createElement(tag);
  if (attrs && attrs.class) el.className = attrs.class;
  if (tag === "img") {
    if (attrs && typeof attrs.src === "string" && attrs.src.startsWith("data:image/")) el.src = attrs.src;
    if (attrs && attrs.alt) el.alt = attrs.alt;
    if (attrs && attrs.width) el.style.width = `${Number(attrs.width)}px`;
  }
  children.forEach((c) => el.appendChild(buildNodes(c, screenRoot)));
  return el;
}

// The header of the screen: progress line and bar, notices (practice, flash, revision,
// preselected answer) and the cue for keys not applied; then the item's content.
export function buildScreen(data, screenRoot) {
  const screen = data.screen || {};
  const top = document.createElement("div");
  top.className = "screen-top";
  if (screen.progress) {
    const p = document.createElement("div");
    p.className = "progress";
    const text = document.createElement("div");
    text.className = "progress-text";
    text.textContent = screen.progress.text;
    const bar = document.createElement("div");
    bar.className = "progress-bar";
    bar.setAttribute("role", "progressbar");
    bar.setAttribute("aria-label", "Progress");
    bar.setAttribute("aria-valuemin", "0");
    bar.setAttribute("aria-valuemax", "100");
    bar.setAttribute("aria-valuenow", String(Math.round(100 * screen.progress.fraction)));
    bar.setAttribute("aria-valuetext", screen.progress.text);
    const fill = document.createElement("div");
    fill.style.width = `${Math.round(1000 * screen.progress.fraction) / 10}%`;
    bar.appendChild(fill);
    p.append(text, bar);
    top.appendChild(p);
  }
  // a notice: [kind, text] or [kind, text, what the keys do], the last hidden on touch screens
  (screen.notices || []).forEach(([kind, text, keys]) => {
    const n = document.createElement("div");
    n.className = `notice ${kind}`;
    n.textContent = text;
    if (keys) {
      const hint = document.createElement("span");
      hint.className = "hint";
      hint.textContent = keys;
      n.appendChild(hint);
    }
    top.appendChild(n);
  });
  const cue = document.createElement("div");
  cue.className = "cue";
  cue.setAttribute("role", "alert");
  top.appendChild(cue);
  const content = document.createElement("div");
  content.className = "item-content";
  (screen.content || []).forEach((node) => content.appendChild(buildNodes(node, screenRoot)));
  return { top, cue, content };
}

// Keys go to the live screen only: one listener for the page, pointed at the screen in place.
// A key held down repeats its keydown (`event.repeat`): one physical press acts at most once,
// so the repeats never answer, submit or navigate, and do not activate a focused button either.
export const KEYS = window.__studyappKeys || (window.__studyappKeys = { handler: null, acts: null, strayGroupAt: 0 });
if (!KEYS.installed) {
  document.addEventListener("keydown", (event) => {
    if (!event.repeat) {
      if (KEYS.handler) KEYS.handler(event);
      return;
    }
    if (typingInto(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event) || (KEYS.acts && KEYS.acts(event.key))) event.preventDefault();
  });
  KEYS.installed = true;
}

// Drop a key that would act (`event`) on the screen `root`: counted, and said on that screen.
// `groupKey`: whether the key is part of a multi-key answer (see GROUP_PAUSE_MS).
export function dropKey(root, event, groupKey) {
  event.preventDefault();
  notApplied.add(event.key, Number(root.dataset.item));
  if (groupKey && groupKey(event.key)) KEYS.strayGroupAt = performance.now();
  const cue = root.querySelector(".cue");
  if (!cue) return;
  const keys = [...JSON.parse(cue.dataset.keys || "[]"), keyName(event.key)];
  cue.dataset.keys = JSON.stringify(keys);
  cue.textContent = `Too fast — nothing was recorded for ${keys.length === 1 ? "that key" : "those keys"} ` +
    `(${keys.join(", ")}): your last answer was still being saved.`;
  toast(cue.textContent);
}

// Whether `event` continues a group of keys dropped on the screen before (see GROUP_PAUSE_MS);
// Enter ends the group, and is dropped with it.
export function continuesStrayGroup(event, groupKey) {
  if (!KEYS.strayGroupAt) return false;
  if (performance.now() - Math.max(KEYS.strayGroupAt, KEYS.shownAt || 0) > GROUP_PAUSE_MS) {
    KEYS.strayGroupAt = 0;
    return false;
  }
  if (event.key === "Enter") {
    KEYS.strayGroupAt = 0;
    return true;
  }
  if (!groupKey(event.key)) return false;
  KEYS.strayGroupAt = performance.now();
  return true;
}

// Say on the live screen that keys continuing a group typed on the previous screen were dropped.
export function sayStrayGroup(root, event) {
  event.preventDefault();
  notApplied.add(event.key, Number(root.dataset.item));
  const cue = root.querySelector(".cue");
  if (cue) {
    cue.textContent = `Nothing was recorded for ${keyName(event.key)}: it came right after keys ` +
      "typed for the previous item. Pause a moment, then type this item's answer.";
    toast(cue.textContent);
  }
}

// While a screen is being replaced (or is saving) a key that would act there is dropped.
function notLive(root, acts, groupKey) {
  return (event) => {
    if (!root.isConnected) return;
    if (typingInto(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event) || !acts(event.key)) return;
    dropKey(root, event, groupKey);
  };
}

// Put the new screen (`parts`, built off-page) in place once its images are decoded and the
// style sheets loaded; then it takes the keys (`onKey`; `acts(key)`: whether a key acts there,
// `groupKey(key)`: whether it is part of a multi-key answer), the focus goes to its answer
// controls (`focusTarget`) and a screen reader hears it. Returns the cleanup for Streamlit: a superseded build is dropped, and
// until the next screen is in place keys that would act are dropped.
export function present(root, data, parts, { onKey, acts, groupKey = null, focusTarget, whenShown }) {
  let cancelled = false;
  const times = { invoked: performance.now() };  // for benchmarks.annotate_latency
  window.__studyappScreenTimes = times;
  const images = parts.flatMap((p) => [...p.querySelectorAll("img")]);
  root.dataset.state = root.dataset.state === "ready" ? "replacing" : root.dataset.state;
  const dropping = notLive(root, acts, groupKey);
  KEYS.handler = dropping;
  KEYS.acts = acts;
  const decoded = images.map((img) => (img.decode ? img.decode().catch(() => null) : null));
  Promise.all([...sheets.values(), ...decoded]).then(() => {
    if (cancelled) return;
    const active = document.activeElement;
    const hadFocus = !active || active === document.body || root.contains(active);
    root.replaceChildren(...parts);
    root.dataset.item = String(data.item_id);
    root.dataset.state = "ready";
    times.shown = performance.now();
    KEYS.shownAt = times.shown;
    if (data.scroll_top) scrollToTop(root);
    KEYS.handler = onKey;
    if (hadFocus && focusTarget) focusTarget.focus({ preventScroll: true });
    announce(parts.slice(0, 2).map((p) => p.innerText || p.textContent).join(". "));
    whenShown();
  });
  return () => {
    cancelled = true;
    if (KEYS.handler === onKey) KEYS.handler = dropping;
  };
}
