// One item's screen with a rating scale (`present`, common.js): its content and its answer
// controls — a button per value, Back and (when revising) Continue, and the same as keys. The
// first press locks the screen and shows "saving…"; only the next screen (new data from the
// server) takes input again, and keys pressed until then are dropped ("too fast", common.js).
// Every answer carries the id of the item it was given for, so the server can refuse one that
// reaches another item. A press made while the server is unreachable is kept and sent again
// (`delivery`, common.js).

export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const root = parentElement.querySelector(".answer-bar");
  const state = { locked: false, offline: false };
  const { top, cue, content } = buildScreen(data, root);
  const controls = document.createElement("div");
  controls.className = "controls";
  const row = document.createElement("div");
  row.className = "values";
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", "Your answer");
  row.tabIndex = -1;  // the focus comes here after each answer: Tab goes on to the values
  const buttons = [];
  const status = document.createElement("span");
  status.className = "status";
  status.setAttribute("role", "status");
  const showStatus = () => {
    const text = !state.offline ? (state.locked ? "saving…" : "")
      : "reconnecting…" + (state.locked ? " your answer is sent when the server is back" : "");
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
    cue.textContent = "";
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
  controls.appendChild(row);
  const comment = commentBox(data);
  if (comment) controls.appendChild(comment);
  const nav = document.createElement("div");
  nav.className = "nav";
  add(nav, "Back (Backspace)", "nav-button", "back", null, !data.can_go_back);
  if (data.revising) add(nav, "Continue where I stopped (Enter)", "nav-button", "continue", null);
  nav.appendChild(status);
  controls.appendChild(nav);
  if (data.hint) {
    const hint = document.createElement("div");
    hint.className = "hint";
    hint.textContent = data.hint;
    controls.appendChild(hint);
  }

  const keys = new Map(data.values.map((v) => [String(v), v]));
  const actionOf = (key) => {
    if (keys.has(key)) return ["answer", keys.get(key)];
    if (data.cant_judge && key.toLowerCase() === "x") return ["answer", CANT_JUDGE];
    if (key === "Backspace" && data.can_go_back) return ["back", null];
    if (key === "Enter" && data.revising) return ["continue", null];
    if (key === "Enter" && data.current !== null) return ["answer", data.current];
    return null;
  };
  const onKey = (event) => {
    if (typingInto(event.target)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event)) return;  // Tab + Enter: what a click on that control does
    const action = actionOf(event.key);
    if (!action) return;
    event.preventDefault();
    if (state.locked) {  // this item's answer is being saved: the key is dropped
      dropKey(root, event);
      return;
    }
    send(...action);
  };
  let stopped = false;
  const stopPresent = present(root, data, [top, content, controls], {
    onKey,
    acts: (key) => actionOf(key) !== null,
    focusTarget: row,
    whenShown: () => {
      if (stopped) return;
      post.start();
      if (post.resendKept()) lock();  // pressed while the server was unreachable: sent again
    },
  });
  return () => {
    stopped = true;
    stopPresent();
    post.stop();
  };
}
