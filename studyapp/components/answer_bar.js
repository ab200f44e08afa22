// The answer controls of one item: a button per value, Back and (when revising) Continue, and
// the same as keys. The first press locks the bar and shows "saving…"; only the bar of the next
// item (a new mount, or a new server run of this one) takes input again. Every answer carries
// the id of the item it was given for, so the server can refuse one that reaches another item.
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const root = parentElement.querySelector(".answer-bar");
  const state = { locked: false };
  root.innerHTML = "";
  root.dataset.item = String(data.item_id);
  root.dataset.state = "ready";
  const row = document.createElement("div");
  row.className = "values";
  const buttons = [];
  const send = (kind, value) => {
    if (state.locked) {
      window.__answerBarDropped = (window.__answerBarDropped || 0) + 1;
      return;
    }
    state.locked = true;
    root.dataset.state = "saving";
    buttons.forEach((b) => (b.disabled = true));
    status.textContent = "saving…";
    setTriggerValue("action", { item_id: data.item_id, kind, value,
                                nonce: `${Date.now()}-${Math.random().toString(36).slice(2)}` });
  };
  const add = (parent, text, cls, kind, value, disabled) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.disabled = Boolean(disabled);
    b.addEventListener("click", () => send(kind, value));
    parent.appendChild(b);
    buttons.push(b);
    return b;
  };
  data.values.forEach((value, k) => {
    const chosen = data.current !== null && String(value) === String(data.current);
    add(row, `${value} — ${data.labels[k]}`, chosen ? "value chosen" : "value", "answer", value);
  });
  root.appendChild(row);
  const nav = document.createElement("div");
  nav.className = "nav";
  add(nav, "Back (Backspace)", "nav-button", "back", null, !data.can_go_back);
  if (data.revising) add(nav, "Continue where I stopped (Enter)", "nav-button", "continue", null);
  const status = document.createElement("span");
  status.className = "status";
  status.setAttribute("role", "status");
  nav.appendChild(status);
  root.appendChild(nav);
  const keys = new Map(data.values.map((v) => [String(v), v]));
  const onKey = (event) => {
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (keys.has(event.key)) send("answer", keys.get(event.key));
    else if (event.key === "Backspace" && data.can_go_back) send("back", null);
    else if (event.key === "Enter" && data.revising) send("continue", null);
    else if (event.key === "Enter" && data.current !== null) send("answer", data.current);
    else return;
    event.preventDefault();
  };
  document.addEventListener("keydown", onKey);
  if (data.scroll_top) window.scrollTo(0, 0);
  return () => document.removeEventListener("keydown", onKey);
}
