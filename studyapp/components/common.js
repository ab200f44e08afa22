// Shared by the answer components: studyapp/components/__init__.py puts this file in front of
// each component's own module (no build step, so no imports between the files).
//
// Delivery: an answer made while the server is unreachable (restart, network loss) is not
// lost. It is kept in sessionStorage until a server run shows it was seen (`data.seen_nonce`),
// and sent again when the connection is back or the controls of the same item are mounted
// again. Meanwhile the controls say "reconnecting…" and Streamlit's developer "Connection
// error" dialog is hidden.
const PENDING = "studyapp.pending-answer";
const CANT_JUDGE = "cant_judge";  // the "can't judge" answer (studyapp.models.CANT_JUDGE)
const OFFLINE_CLASS = "studyapp-offline";
const NOT_TYPED = ["checkbox", "radio", "button", "submit", "range", "reset"];

function typingInto(target) {
  if (!target) return false;
  if (target.isContentEditable || ["TEXTAREA", "SELECT"].includes(target.tagName)) return true;
  return target.tagName === "INPUT" && !NOT_TYPED.includes(target.type);
}

// Enter or Space on a focused control (reached with Tab) does what a click on it does: the
// browser's own activation, never the page's key for Enter.
const ACTIVATED = ["BUTTON", "A", "SUMMARY", "SELECT", "TEXTAREA"];
function activatesFocused(event) {
  if (event.key !== "Enter" && event.key !== " ") return false;
  const t = event.target;
  if (!t || t === document.body || t === document.documentElement) return false;
  if (ACTIVATED.includes(t.tagName) || t.tagName === "INPUT") return true;
  const role = t.getAttribute && t.getAttribute("role");
  return Boolean(role && ["button", "checkbox", "switch", "tab", "link", "option", "menuitem"].includes(role));
}

// Keys pressed while the screen shows an answer being saved cannot reach that item (it is
// answered) and must not reach the next one, which the annotator has not seen: they are "not
// applied", said so on screen at once and on the next item, and sent with the next action
// (``not_applied``) so the server counts them in the page events.
const NOT_APPLIED = "studyapp.not-applied";
const notApplied = {
  list() { return JSON.parse(sessionStorage.getItem(NOT_APPLIED) || "[]"); },
  add(key, item) {
    const all = notApplied.list();
    all.push({ key, item });
    sessionStorage.setItem(NOT_APPLIED, JSON.stringify(all));
    window.__studyappNotApplied = (window.__studyappNotApplied || 0) + 1;
  },
  clear() { sessionStorage.removeItem(NOT_APPLIED); },
  text(all) {
    const keys = all.map((p) => (p.key === " " ? "Space" : p.key));
    return `Not applied — press again: ${keys.join(", ")} ` +
      `(pressed while your last answer was being saved)`;
  },
};

function scrollToTop(root) {  // Streamlit scrolls its main container, not the window
  for (let node = root; node; node = node.parentElement) node.scrollTop = 0;
  window.scrollTo(0, 0);
}

// The optional comment sent with an answer (spec: answers.comments), or null when the study
// takes none; Esc leaves the box so that the keys answer again.
function commentBox(data) {
  if (!data.comments) return null;
  const box = document.createElement("textarea");
  box.className = "comment";
  box.rows = 2;
  box.maxLength = 2000;
  box.placeholder = "Optional comment, sent with your answer (Esc leaves the box)";
  box.value = data.comment || "";
  box.addEventListener("keydown", (event) => { if (event.key === "Escape") box.blur(); });
  return box;
}

function newNonce() {
  return `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

function connectionErrorShown() {
  return [...document.querySelectorAll('[data-testid="stDialog"] h2')]
    .some((h) => h.textContent.trim() === "Connection error");
}

// `onConnection(offline)` runs on every change of the connection; returns
// { transmit(action), resendKept() -> bool, stop() }.
function delivery(data, setTriggerValue, onConnection) {
  let offline = false;
  const kept = () => JSON.parse(sessionStorage.getItem(PENDING) || "null");
  const transmit = (action) => {
    if (!("not_applied" in action)) {
      action.not_applied = notApplied.list().map((p) => p.key);
      notApplied.clear();
    }
    sessionStorage.setItem(PENDING, JSON.stringify(action));
    setTriggerValue("action", action);
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
    stop() { observer.disconnect(); },
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
function buildScreen(data, screenRoot) {
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
    bar.setAttribute("aria-valuenow", String(Math.round(100 * screen.progress.fraction)));
    const fill = document.createElement("div");
    fill.style.width = `${Math.round(1000 * screen.progress.fraction) / 10}%`;
    bar.appendChild(fill);
    p.append(text, bar);
    top.appendChild(p);
  }
  (screen.notices || []).forEach(([kind, text]) => {
    const n = document.createElement("div");
    n.className = `notice ${kind}`;
    n.textContent = text;
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
const KEYS = window.__studyappKeys || (window.__studyappKeys = { handler: null });
if (!KEYS.installed) {
  document.addEventListener("keydown", (event) => { if (KEYS.handler) KEYS.handler(event); });
  KEYS.installed = true;
}

// While a screen is being replaced (or is saving) a key that would act there is not applied:
// said on the screen in place and counted.
function notLive(root, acts) {
  return (event) => {
    if (!root.isConnected) return;
    if (typingInto(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event) || !acts(event.key)) return;
    event.preventDefault();
    notApplied.add(event.key, Number(root.dataset.item));
    sayNotApplied(root);
  };
}

function sayNotApplied(root) {
  const cue = root.querySelector(".cue");
  if (cue) cue.textContent = notApplied.text(notApplied.list());
}

// Put the new screen (`parts`, built off-page) in place once its images are decoded; then it
// takes the keys (`onKey`). Returns the cleanup for Streamlit: a superseded build is dropped,
// and until the next screen is in place keys are said "not applied".
function present(root, data, parts, onKey, acts, whenShown) {
  let cancelled = false;
  const times = { invoked: performance.now() };  // for benchmarks.annotate_latency
  window.__studyappScreenTimes = times;
  const images = parts.flatMap((p) => [...p.querySelectorAll("img")]);
  root.dataset.state = root.dataset.state === "ready" ? "replacing" : root.dataset.state;
  KEYS.handler = notLive(root, acts);
  Promise.all(images.map((img) => (img.decode ? img.decode().catch(() => null) : null))).then(() => {
    if (cancelled) return;
    root.replaceChildren(...parts);
    root.dataset.item = String(data.item_id);
    root.dataset.state = "ready";
    times.shown = performance.now();
    if (data.scroll_top) scrollToTop(root);
    KEYS.handler = onKey;
    whenShown();
  });
  return () => {
    cancelled = true;
    if (KEYS.handler === onKey) KEYS.handler = notLive(root, acts);
  };
}
