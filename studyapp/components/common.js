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

// Watches the connection, listens for the keys and shows the item from its top; returns the
// cleanup the component gives back to Streamlit.
function attach(root, data, post, onKey) {
  post.start();
  document.addEventListener("keydown", onKey);
  if (data.scroll_top) scrollToTop(root);
  return () => {
    post.stop();
    document.removeEventListener("keydown", onKey);
  };
}

