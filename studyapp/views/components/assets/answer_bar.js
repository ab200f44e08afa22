// One item's screen with a rating scale (`present`, common.js): its content and its answer
// controls — a button per value, Back and (when revising) Continue, and the same as keys. The
// first press locks the screen and shows "saving…" with the value pressed still marked; only the
// next screen (new data from the server) takes input again, and keys pressed until then are
// dropped ("too fast", common.js). A press before the item has been seen (`seenGate`, seen.js:
// drawn for the study's floor, both sides of the pair in view) is dropped too.
// Every answer carries the id of the item it was given for, so the server can refuse one that
// reaches another item. A press made while the server is unreachable is kept and sent again
// (`delivery`, common.js). An answer the answer route takes is followed by the next screen drawn
// in place (`routed`, common.js).

import {
  activatesFocused, buildScreen, CANT_JUDGE, commentBox, delivery, dropKey, linkStyles, newNonce, present,
  routed, typingInto,
} from "./common.js";
import { seenGate } from "./seen.js";

linkStyles(["common.css", "answer_bar.css"]);

export default routed((component, redraw) => {
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
  }, redraw);
  // the pair an answer rates: each side must have been in view (`seenGate`, seen.js)
  const gate = seenGate(root, data, cue);
  const sides = [...content.querySelectorAll(".side")];
  sides.forEach((side, k) => {
    const name = side.querySelector("h3");
    side.dataset.seenName = name ? `“${name.textContent}”` : `side ${k + 1} of the pair`;
  });
  gate.track(sides);
  const pressedOf = new Map();  // answer value -> its button
  const send = (kind, value, event) => {
    if (state.locked) return;
    if (!gate.admit(event, kind === "answer" ? sides : [])) return;
    const pressed = kind === "answer" ? pressedOf.get(String(value)) : null;
    lock();
    if (pressed) {  // the value pressed stays marked while it is saved
      buttons.forEach((b) => b.classList.remove("chosen"));
      pressed.classList.add("chosen", "pressed");
      buttons.forEach((b) => { if (b.hasAttribute("aria-pressed")) b.setAttribute("aria-pressed", String(b === pressed)); });
    }
    cue.textContent = "";
    post.transmit({ item_id: data.item_id, position: data.position, kind, value, comment: comment ? comment.value : null,
                    nonce: newNonce(), seen_ms: gate.seenMs(), in_view: gate.allInView() });
  };
  const add = (parent, text, cls, kind, value, disabled, key) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    if (key) {  // the key's name, not shown on touch screens (common.css)
      const k = document.createElement("span");
      k.className = "key-name";
      k.textContent = ` (${key})`;
      b.appendChild(k);
    }
    b.disabled = Boolean(disabled);
    b.addEventListener("click", (event) => send(kind, value, event));
    parent.appendChild(b);
    buttons.push(b);
    return b;
  };
  const valueButton = (text, value, key) => {
    const chosen = data.current !== null && String(value) === String(data.current);
    const b = add(row, text, chosen ? "value chosen" : "value", "answer", value, false, key);
    b.setAttribute("aria-pressed", String(chosen));
    pressedOf.set(String(value), b);
  };
  data.values.forEach((value, k) => valueButton(`${value} — ${data.labels[k]}`, value));
  if (data.cant_judge) valueButton("Can't judge", CANT_JUDGE, "X");
  controls.appendChild(row);
  const comment = commentBox(data);
  if (comment) controls.appendChild(comment);
  const nav = document.createElement("div");
  nav.className = "nav";
  add(nav, "Back", "nav-button", "back", null, !data.can_go_back, "Backspace");
  if (data.revising) add(nav, "Continue where I stopped", "nav-button", "continue", null, false, "Enter");
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
    send(...action, event);
  };
  let stopped = false;
  const stopPresent = present(root, data, [top, content, controls], {
    onKey,
    acts: (key) => actionOf(key) !== null,
    focusTarget: row,
    whenShown: () => {
      if (stopped) return;
      gate.start();
      post.start();
      if (post.resendKept()) lock();  // pressed while the server was unreachable: sent again
    },
  });
  return () => {
    stopped = true;
    stopPresent();
    gate.stop();
    post.stop();
  };
});
