// The answer controls of one item: a button per value, Back and (when revising) Continue, and
// the same as keys. The first press locks the bar and shows "saving…"; only the bar of the next
// item (a new mount, or a new server run of this one) takes input again. Every answer carries
// the id of the item it was given for, so the server can refuse one that reaches another item.
// A press made while the server is unreachable is kept and sent again (`delivery`, common.js).

export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const root = parentElement.querySelector(".answer-bar");
  const state = { locked: false, offline: false };
  root.innerHTML = "";
  root.dataset.item = String(data.item_id);
  root.dataset.state = "ready";
  const row = document.createElement("div");
  row.className = "values";
  const buttons = [];
  const status = document.createElement("span");
  status.className = "status";
  status.setAttribute("role", "status");
  const showStatus = () => {
    let text = !state.offline ? (state.locked ? "saving…" : "")
      : "reconnecting…" + (state.locked ? " your answer is sent when the server is back" : "");
    const dropped = notApplied.list();
    if (state.locked && dropped.length) text += " · " + notApplied.text(dropped);
    if (status.textContent !== text) status.textContent = text;
  };
  const lock = () => {
    state.locked = true;
    root.dataset.state = "saving";
    buttons.forEach((b) => (b.disabled = true));
    showStatus();
  };
  const post = delivery(data, setTriggerValue, (offline) => {
    state.offline = offline;
    root.dataset.connection = offline ? "offline" : "online";
    showStatus();
  });
  const send = (kind, value) => {
    if (state.locked) return;
    lock();
    post.transmit({ item_id: data.item_id, kind, value, comment: comment ? comment.value : null,
                    nonce: newNonce() });
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
  if (data.cant_judge) {
    add(row, "Can't judge (X)", data.current === CANT_JUDGE ? "value chosen" : "value", "answer", CANT_JUDGE);
  }
  root.appendChild(row);
  const comment = commentBox(data);
  if (comment) root.appendChild(comment);
  const nav = document.createElement("div");
  nav.className = "nav";
  add(nav, "Back (Backspace)", "nav-button", "back", null, !data.can_go_back);
  if (data.revising) add(nav, "Continue where I stopped (Enter)", "nav-button", "continue", null);
  nav.appendChild(status);
  root.appendChild(nav);

  if (post.resendKept()) lock();  // pressed while the server was unreachable: sent again

  // keys dropped on the screen before this one: said here until the next action sends them
  const cue = document.createElement("div");
  cue.className = "cue";
  cue.setAttribute("role", "alert");
  const earlier = notApplied.list();
  let confirmEnter = earlier.length > 0;  // Enter first confirms, after keys were not applied
  if (earlier.length) cue.textContent = notApplied.text(earlier);
  root.insertBefore(cue, row);

  const keys = new Map(data.values.map((v) => [String(v), v]));
  const onKey = (event) => {
    if (typingInto(event.target)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event)) return;  // Tab + Enter: what a click on that control does
    let action;
    if (keys.has(event.key)) action = ["answer", keys.get(event.key)];
    else if (data.cant_judge && event.key.toLowerCase() === "x") action = ["answer", CANT_JUDGE];
    else if (event.key === "Backspace" && data.can_go_back) action = ["back", null];
    else if (event.key === "Enter" && data.revising) action = ["continue", null];
    else if (event.key === "Enter" && data.current !== null) action = ["answer", data.current];
    else return;
    event.preventDefault();
    if (state.locked) {  // this item's answer is being saved: the key cannot be applied
      notApplied.add(event.key, data.item_id);
      showStatus();
      return;
    }
    if (event.key === "Enter" && confirmEnter) {
      confirmEnter = false;
      cue.textContent = notApplied.text(notApplied.list()) + ". Enter again keeps what is shown.";
      return;
    }
    send(...action);
  };
  return attach(root, data, post, onKey);
}
