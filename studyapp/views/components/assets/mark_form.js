// The answer form of one item whose answer is a set of marks, drawn and keyed in the browser:
// "verbs" mode (imSitu) toggles a mark per prediction; "candidates" mode (CrossHOI curation)
// asks correct / incorrect / ambiguous for every candidate and offers two searchable pickers of
// actions to add. Nothing leaves the browser until Submit (or Back / Continue); the first of
// those locks the form and shows "saving…", and the answer carries the id of its item. A mark or
// Submit before the rows it records have been seen (`seenGate`, seen.js) is dropped. A draft
// survives a new server run of the same item (a save that failed); Back / Continue drop it.
// With the spec's answers.cant_judge / answers.comments: a "Can't judge" answer (key x) and an
// optional comment, sent with the answer as in the answer bar.
// An answer made while the server is unreachable is kept and sent again (`delivery`, common.js).
import {
  activatesFocused, buildScreen, CANT_JUDGE, commentBox, continuesStrayGroup, delivery, dropKey, linkStyles,
  newNonce, present, sayStrayGroup, typingInto,
} from "./common.js";
import { bringIntoView, seenGate } from "./seen.js";

linkStyles(["common.css", "mark_form.css"]);

const drafts = new Map();
const MARKS = [["correct", "c"], ["incorrect", "i"], ["ambiguous", "a"]];
const MATCHES_SHOWN = 8;

function make(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

// `text`, then the key that does the same in a span that touch screens do not show (common.css)
function withKey(el, text, key) {
  el.textContent = text;
  if (key) el.appendChild(make("span", "key-name", ` (${key})`));
  return el;
}

function startDraft(data) {
  const n = data.items.length;
  if (data.mode === "verbs") {
    return { marks: data.current ? [...data.current].map((c) => c === "1") : Array(n).fill(false) };
  }
  const cur = data.current || { marks: Array(n).fill(null), plus: [], minus: [] };
  return { marks: [...cur.marks], plus: [...cur.plus], minus: [...cur.minus], active: 0 };
}

export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const root = parentElement.querySelector(".mark-form");
  const { top, cue, content } = buildScreen(data, root);
  const controls = make("div", "controls");
  const draftKey = `${data.item_id}:${JSON.stringify(data.current)}`;
  if (!drafts.has(draftKey)) drafts.set(draftKey, startDraft(data));
  const draft = drafts.get(draftKey);
  const n = data.items.length;
  let locked = false;

  const status = make("div", "status");
  status.setAttribute("role", "status");
  let offline = false;
  const showSaving = () => {
    status.className = "status";
    status.textContent = offline ? "reconnecting… your answer is sent when the server is back"
      : "saving…";
  };
  const lock = () => {
    locked = true;
    root.dataset.state = "saving";
    controls.querySelectorAll("button, input").forEach((el) => (el.disabled = true));
    showSaving();
  };
  const post = delivery(data, setTriggerValue, (now) => {
    offline = now;
    root.dataset.connection = offline ? "offline" : "online";
    if (locked) showSaving();
    else if (offline) status.textContent = "reconnecting…";
    else if (status.textContent === "reconnecting…") status.textContent = "";
  });
  // the rows an answer records (the verbs, the candidates): each must have been in view
  // (`seenGate`, seen.js); set below
  const gate = seenGate(root, data, cue);
  let seenRows = [];
  const send = (kind, value, event, needs = []) => {
    if (locked) return;
    if (!gate.admit(event, needs)) return;
    if (kind !== "answer") drafts.delete(draftKey);
    lock();
    cue.textContent = "";
    post.transmit({ item_id: data.item_id, position: data.position, kind, value, comment: comment ? comment.value : null,
                    nonce: newNonce(), seen_ms: gate.seenMs(), in_view: gate.allInView() });
  };
  const button = (parent, text, cls, onClick) => {
    const b = make("button", cls, text);
    b.type = "button";
    b.addEventListener("mousedown", (e) => e.preventDefault()); // a click takes no focus
    b.addEventListener("click", (event) => {
      if (!b.closest(".picker") && typingInto(document.activeElement)) document.activeElement.blur();
      onClick(event);
    });
    parent.appendChild(b);
    return b;
  };

  const comment = commentBox(data);
  // what keeps the answer from being sent ("Not yet marked: …"), above the candidates, in view
  const problem = make("div", "problem");
  problem.setAttribute("role", "alert");
  const list = make("div", "rows");
  list.setAttribute("role", "group");
  list.setAttribute("aria-label", data.mode === "verbs" ? "The verbs to mark" : "The candidates to mark");
  list.tabIndex = -1;  // the focus comes here after each answer: Tab goes on to the marks
  controls.append(problem, list);
  const submitBar = make("div", "nav");
  const submit = button(submitBar, "", "submit", (event) => trySubmit(event));
  let render, trySubmit, onModeKey, keyHint;

  if (data.mode === "verbs") {
    const rows = data.items.map((item, k) => button(list, "", "verb", (event) => toggle(k, event)));
    rows.forEach((b, k) => { b.dataset.seenName = `verb ${k + 1} (${data.items[k].label})`; });
    seenRows = rows;
    const toggle = (k, event) => {
      if (!gate.admit(event, [rows[k]])) return;
      draft.marks[k] = !draft.marks[k];
      render();
    };
    render = () => {
      rows.forEach((b, k) => {
        b.classList.toggle("on", draft.marks[k]);
        b.setAttribute("aria-pressed", String(draft.marks[k]));
        b.textContent = `${k + 1}. ${data.items[k].label}${draft.marks[k] ? " ✓ correct" : ""}`;
      });
      const count = draft.marks.filter(Boolean).length;
      withKey(submit, `Submit (${count} of ${n} marked correct)`, "Enter");
    };
    trySubmit = (event) => send("answer", draft.marks.map((m) => (m ? "1" : "0")).join(""), event, rows);
    const zoomed = () => document.body.classList.contains("mark-zoom");
    const zoom = button(submitBar, "", "zoom", () => setZoom(!zoomed()));
    const setZoom = (on) => {
      document.body.classList.toggle("mark-zoom", on);
      withKey(zoom, on ? "Smaller image" : "Larger image", "z");
      if (data.zoom_note) zoom.appendChild(document.createTextNode(` — ${data.zoom_note}`));
    };
    setZoom(zoomed());
    onModeKey = (key, dry, event) => {
      const k = Number(key) - 1;
      if (dry) return (/^[1-9]$/.test(key) && k < n) || key === "z";
      if (/^[1-9]$/.test(key) && k < n) toggle(k, event);
      else if (key === "z") zoom.click();
      else return false;
      return true;
    };
    keyHint = `${n === 1 ? "1 marks or unmarks the verb" : `1–${n} mark or unmark a verb`}` +
      " · z larger or smaller image";
  } else {
    const named = (k) => `${k + 1}. ${data.items[k].label}` +
      (data.items[k].note ? ` (${data.items[k].note})` : "");
    const rows = data.items.map((item, k) => {
      const row = make("div", "candidate");
      const name = make("span", "name", named(k));
      row.appendChild(name);
      name.addEventListener("click", () => { draft.active = k; render(); });
      const marks = MARKS.map(([mark]) => button(row, "", `mark ${mark}`,
                                                 (event) => setMark(k, mark, event)));
      // each mark button is named with its candidate (a screen reader hears which one it marks)
      marks.forEach((b, j) => b.setAttribute("aria-label", `${MARKS[j][0]}: ${named(k)}`));
      row.dataset.seenName = `candidate ${named(k)}`;
      list.appendChild(row);
      return { row, marks };
    });
    seenRows = rows.map(({ row }) => row);
    const unmarked = () => draft.marks.map((m, k) => (m ? null : k)).filter((k) => k !== null);
    const setMark = (k, mark, event) => {
      if (!gate.admit(event, [rows[k].row])) return;
      draft.marks[k] = mark;
      const next = unmarked().find((j) => j > k) ?? unmarked()[0];
      draft.active = next ?? k;
      render();
    };
    const pickers = [picker("Add a missing correct action", "plus", "minus"),
                     picker("Add a tempting wrong answer (an action this person could seem to do, but does not)", "minus", "plus")];
    let shownActive = null;
    render = () => {
      rows.forEach(({ row, marks }, k) => {
        row.classList.toggle("active", k === draft.active);
        row.setAttribute("aria-current", String(k === draft.active));
        marks.forEach((b, j) => {
          const on = draft.marks[k] === MARKS[j][0];
          b.classList.toggle("on", on);
          b.setAttribute("aria-pressed", String(on));
          withKey(b, `${on ? "✓ " : ""}${MARKS[j][0]}`, MARKS[j][1]);
        });
      });
      pickers.forEach((p) => p.render());
      withKey(submit, "Submit", "Enter");
      if (shownActive !== draft.active && rows[draft.active].row.isConnected) {
        bringIntoView(root, rows[draft.active].row);  // the active one stays in view, uncovered (seen.js)
      }
      shownActive = rows[draft.active].row.isConnected ? draft.active : null;
      if (problem.textContent) showMissing();
    };
    const showMissing = () => {
      const missing = unmarked();
      problem.textContent = missing.length ? `Not yet marked: ${missing.map(named).join("; ")}. ` +
        "Mark every candidate correct, incorrect or ambiguous." : "";
      return missing;
    };
    trySubmit = (event) => {
      if (locked || !gate.admit(event, seenRows)) return;  // too soon: dropped before "not yet marked"
      const missing = showMissing();
      if (!missing.length) {
        send("answer", { marks: draft.marks, plus: draft.plus, minus: draft.minus }, event, seenRows);
      }
      else {
        draft.active = missing[0];
        render();
        problem.scrollIntoView({ block: "nearest" });
      }
    };
    onModeKey = (key, dry, event) => {
      const k = Number(key) - 1;
      const mark = MARKS.find(([, letter]) => letter === key.toLowerCase());
      if (dry) return (/^[1-9]$/.test(key) && k < n) || ["ArrowDown", "ArrowUp"].includes(key) || Boolean(mark);
      if (/^[1-9]$/.test(key) && k < n) draft.active = k;
      else if (key === "ArrowDown") draft.active = Math.min(draft.active + 1, n - 1);
      else if (key === "ArrowUp") draft.active = Math.max(draft.active - 1, 0);
      else if (mark) setMark(draft.active, mark[0], event);
      else return false;
      render();
      return true;
    };
    const digits = Math.min(n, 9) === 1 ? "1" : `1–${Math.min(n, 9)}`;
    keyHint = `${digits} or ↑ ↓ choose a candidate · c correct · i incorrect · a ambiguous`;

    // A search field over the vocabulary's actions: ↑ ↓ choose a match, Enter adds that one.
    function picker(title, own, other) {
      const box = make("div", "picker");
      box.appendChild(make("div", "picker-title", title));
      const chosen = make("div", "chips");
      const input = make("input");
      input.type = "search";
      input.placeholder = `search the ${data.classes.length} HOI classes (↑ ↓ choose a match, Enter adds it)`;
      input.setAttribute("aria-label", title);
      const matches = make("div", "matches");
      box.append(chosen, input, matches);
      controls.appendChild(box);
      let found = [], highlighted = 0;
      const add = (id) => {
        if (!draft[own].includes(id)) draft[own].push(id);
        draft[other] = draft[other].filter((x) => x !== id);
        input.value = "";
        render();
      };
      const remove = (id) => { draft[own] = draft[own].filter((x) => x !== id); render(); };
      input.addEventListener("input", () => { highlighted = 0; render(); });
      input.addEventListener("keydown", (e) => {
        if (e.repeat && e.key === "Enter") {  // a held Enter adds or submits once
          e.preventDefault();
          e.stopPropagation();
          return;
        }
        if (e.key === "ArrowDown") highlighted = Math.max(0, Math.min(highlighted + 1, found.length - 1));
        else if (e.key === "ArrowUp") highlighted = Math.max(highlighted - 1, 0);
        else if (e.key === "Enter" && input.value.trim()) { if (found.length) add(found[highlighted]); }
        else if (e.key === "Enter") { input.blur(); trySubmit(e); }
        else if (e.key === "Escape") { input.value = ""; input.blur(); }
        else return;
        e.preventDefault();
        e.stopPropagation();
        render();
      });
      return {
        render() {
          chosen.innerHTML = "";
          draft[own].forEach((id) => button(chosen, `${data.classes[id]} ×`, "chip", () => remove(id)));
          const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
          const fits = (id) => !draft[own].includes(id) &&
            words.every((w) => data.classes[id].toLowerCase().includes(w));
          found = words.length ? [...data.classes.keys()].filter(fits).slice(0, MATCHES_SHOWN) : [];
          matches.innerHTML = "";
          if (words.length && !found.length) matches.appendChild(make("div", "none", "no action matches"));
          found.forEach((id, j) => button(matches, data.classes[id],
                                          j === highlighted ? "match highlighted" : "match", () => add(id)));
        },
      };
    }
  }

  if (data.cant_judge) {
    const label = "Can't judge";
    const cant = button(submitBar, "", data.cant_judge_chosen ? "cant-judge on" : "cant-judge",
                        (event) => send("answer", CANT_JUDGE, event));
    withKey(cant, data.cant_judge_chosen ? `✓ ${label}` : label, "x");
    cant.setAttribute("aria-pressed", String(Boolean(data.cant_judge_chosen)));
  }
  const nav = make("div", "nav");
  const back = withKey(button(nav, "", "nav-button", (event) => send("back", null, event)), "Back", "Backspace");
  back.disabled = !data.can_go_back;
  if (data.revising) button(nav, "Continue where I stopped", "nav-button", (event) => send("continue", null, event));
  nav.appendChild(status);
  if (comment) controls.appendChild(comment);
  const hint = make("div", "hint", `Keys: ${keyHint} · Enter submits` +
    (data.cant_judge ? " · x can't judge" : "") +
    (data.can_go_back ? " · Backspace goes back" : ""));
  const sticky = make("div", "sticky-bar");  // Submit and Back stay in view (common.css)
  sticky.append(submitBar, nav, hint);
  controls.appendChild(sticky);
  root.dataset.mode = data.mode;
  render();
  gate.track(seenRows);

  const acts = (key) => key === "Enter" || (data.cant_judge && key.toLowerCase() === "x") ||
    (key === "Backspace" && data.can_go_back) || onModeKey(key, true);
  const groupKey = (key) => onModeKey(key, true);
  const onKey = (event) => {
    if (typingInto(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (activatesFocused(event)) return;  // Tab + Enter: what a click on that control does
    if (locked) {  // this item's answer is being saved: the key is dropped
      if (acts(event.key)) dropKey(root, event, groupKey);
      return;
    }
    if (acts(event.key) && continuesStrayGroup(event, groupKey)) {
      sayStrayGroup(root, event);
      return;
    }
    if (event.key === "Enter") trySubmit(event);
    else if (data.cant_judge && event.key.toLowerCase() === "x") send("answer", CANT_JUDGE, event);
    else if (event.key === "Backspace" && data.can_go_back) send("back", null, event);
    else if (!onModeKey(event.key, false, event)) return;
    event.preventDefault();
  };
  let stopped = false;
  const stopPresent = present(root, data, [top, content, controls], {
    onKey,
    acts,
    groupKey,
    focusTarget: list,
    whenShown: () => {
      if (stopped) return;
      gate.start();
      post.start();
      if (post.resendKept()) lock();  // answered while the server was unreachable: sent again
    },
  });
  return () => {
    stopped = true;
    stopPresent();
    gate.stop();
    post.stop();
  };
}
