"""The annotator page: join, instructions, one item at a time, completion.

Who the annotator is comes from the URL (``?token=...``, or ``?study=...&PROLIFIC_PID=...``),
and everything else from the database, so a closed tab or a restarted server resumes where
the annotator stopped. ``st.session_state`` only holds what is being looked at (a revisited
item), when the current item was shown, and for the one run after a key press the screen that
press's transaction returned (``assignment.answer``), so that run claims and counts nothing
again; every other run (a reload, a reconnect, another tab) reads the database.
"""

import logging
import time
from functools import partial

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from metrics import InputError
from studyapp.core import safe_markdown
from studyapp.core.models import CANT_JUDGE
from studyapp.platform import assignment
from studyapp.platform.assignment import prolific
from studyapp.platform.records import studies
from studyapp.platform.reporting.overview import platform_summary
from studyapp.studytypes import get_type
from studyapp.views import answer_route, item_screen
from studyapp.views.components import answer_bar, page_focus
from studyapp.views.studytypes import view_of
from studyapp.views.ui import base_url, effort

LOG = logging.getLogger("studyapp.annotate")
NOT_SAVED = ("Your answer was not saved, please retry. (The server could not store it; "
             "your earlier answers are safe.)")
NOT_LOADED = "The server could not load your next item, please retry in a moment."


def landing() -> None:
    summary = platform_summary()
    st.title(summary["project"])
    st.caption("Human studies behind the semantic evaluation of human–object interaction detectors.")
    st.info("Annotators: open the invite link you were given (it names your study).")
    overview(summary)


def overview(summary: dict) -> None:
    vocab = summary["vocabulary"]
    st.subheader(f"Vocabulary: {vocab['name']}")
    cols = st.columns(4)
    cols[0].metric("Verbs", vocab["verbs"])
    cols[1].metric("Objects", vocab["objects"])
    cols[2].metric("HOI classes", vocab["hoi_classes"])
    cols[3].metric("Rare classes", vocab["rare_classes"])
    st.subheader("Similarity matrices")
    st.table([{"matrix": role, "file": m["file"], "labels": m["labels"],
               "non-zero pairs": m["pairs"], "sparsity": f"{m['sparsity']:.2%}", "source": m["source"]}
              for role, m in summary["matrices"].items()])


def join_with_code(slug: str, code: str, pseudonym: str) -> None:
    try:
        _annotator, token = assignment.join_with_code(slug, code, pseudonym)
    except InputError as exc:
        st.error(safe_markdown.text(exc))
        return
    st.query_params.clear()
    st.query_params["token"] = token
    st.rerun()


def code_form(slug: str) -> None:
    title = studies.joinable_title(slug)
    if title is None:
        st.error(safe_markdown.text(prolific.NOT_JOINABLE))
        return
    st.title(f"Join “{safe_markdown.text(title)}”")
    with st.form("join"):
        code = st.text_input("Access code", type="password")
        pseudonym = st.text_input("Choose a pseudonym (no real name needed)")
        if st.form_submit_button("Join"):
            join_with_code(slug, code, pseudonym)


def identify() -> int | None:
    """The annotator id from the URL, or None after showing the right entry page."""
    params = st.query_params
    if token := params.get("token"):
        known = st.session_state.get("token-annotator")   # (token, id): one lookup per tab
        annotator_id = known[1] if known and known[0] == token else assignment.resolve_token(token)
        if annotator_id is not None:
            st.session_state["token-annotator"] = (token, annotator_id)
        else:
            st.error("This link is not valid. Please check that you copied the whole link, "
                     "or ask the researcher for a new one.")
        return annotator_id
    if params.get("PROLIFIC_PID"):
        try:
            return assignment.join_prolific(params.get("study", ""), params["PROLIFIC_PID"],
                                            params.get("STUDY_ID", ""), params.get("SESSION_ID", "")).id
        except InputError as exc:
            st.error(safe_markdown.text(exc))
            return None
    if params.get("study"):
        code_form(params["study"])
        return None
    landing()
    return None


def personal_link() -> str | None:
    token = st.query_params.get("token")
    return f"{base_url()}/?token={token}" if token else None


def instructions(info: assignment.AnnotatorSession) -> None:
    st.title(safe_markdown.text(info.study_title))
    n_items, seconds = assignment.expected_effort(info.annotator_id)
    st.markdown(effort(n_items, seconds))
    st.markdown(safe_markdown.markdown(info.spec.instructions))
    st.header("How to answer")
    by_pointer, by_keys = how_to_answer(info)
    st.markdown(by_pointer)
    with st.container(key="keys-help"):   # not on touch screens (page.css)
        st.markdown(by_keys)
    example = info.spec.example
    if example:
        st.header("Example")
        view_of(get_type(info.study_type)).render_item(example["fields"], **item_screen.display_options(info))
        if example["rating"] is not None:
            st.markdown(f"A fitting rating: **{example['rating']} — "
                        f"{safe_markdown.text(info.spec.scale.label(example['rating']))}**. "
                        f"{safe_markdown.markdown(example['explanation'])}")
    link = personal_link()
    if link:
        st.markdown("Your personal link — keep it to continue later, on this or another device:")
        with st.container(key="personal-link"):   # wrapped (page.css): no box to scroll sideways
            st.code(link, language=None, wrap_lines=True)
    if info.spec.comprehension:
        comprehension_check(info)
        return
    st.button("Start", type="primary", shortcut="Enter", key="start",
              on_click=assignment.accept_instructions, args=(info.annotator_id,))


def how_to_answer(info: assignment.AnnotatorSession) -> tuple[str, str]:
    """How the answers are given, in plain words, by click or tap and by keys: the type's
    ``answer_help`` and ``keys_help`` (with the scale's first and last value), then the options
    every type shares."""
    scale = info.spec.scale
    view = view_of(get_type(info.study_type))
    ends = {"first": min(scale.values), "last": max(scale.values)}
    by_pointer, by_keys = view.answer_help.format(**ends), view.keys_help.format(**ends)
    if info.spec.cant_judge:
        by_pointer += " If you cannot judge an item, choose “Can't judge”."
        by_keys += " X: Can't judge."
    return (by_pointer + " Back returns to your previous answer, to change it.",
            by_keys + " Backspace: Back.")


def comprehension_check(info: assignment.AnnotatorSession) -> None:
    """The spec's comprehension question under the instructions: the right answer starts the
    items; two attempts (Prolific's policy), the second wrong answer ends the session."""
    check = info.spec.comprehension
    st.header("Before you start")
    if info.comprehension_failures:
        st.warning("That was not the right answer. Please read the instructions above again: you "
                   f"have one more attempt (of {prolific.ATTEMPTS}).")
    with st.form("comprehension"):
        choice = st.radio(safe_markdown.text(check["question"]), check["options"], index=None, key="comprehension-choice")
        st.form_submit_button("Check my answer and start", type="primary", on_click=on_comprehension,
                              args=(info.annotator_id,))
    if st.session_state.pop("comprehension-empty", False) and choice is None:
        st.error("Choose an answer first.")


def on_comprehension(annotator_id: int) -> None:
    choice = st.session_state.get("comprehension-choice")
    if choice is None:
        st.session_state["comprehension-empty"] = True
        return
    prolific.answer_comprehension(annotator_id, choice)


def screened_out(info: assignment.AnnotatorSession) -> None:
    """The polite end of a session screened out by the comprehension check."""
    st.title("Thank you for your interest")
    st.info("Your answers to the check question show that this study's task is not a good fit this "
            "time, so the session ends here. This is not a judgement of you, and no item was rated.")
    page_focus("Thank you for your interest. The session ends here.")
    finish_codes(info)


def routed_out(info: assignment.AnnotatorSession) -> None:
    """The polite end of a session routed out by the spec's ``[routing]``."""
    st.title("Thank you!")
    rated = assignment.answered_count(info.annotator_id)
    st.success(f"Your part of “{safe_markdown.text(info.study_title)}” ends here, after {rated} items: the "
               "study now routes its remaining items to other annotators. You are paid as agreed "
               "for the whole session, and your answers are kept.")
    page_focus(f"Thank you! Your part of “{info.study_title}” ends here, after {rated} items.")
    finish_codes(info)


def completion(info: assignment.AnnotatorSession) -> None:
    st.title("Thank you!")
    rated = assignment.answered_count(info.annotator_id)
    st.success(f"You have finished your part of “{safe_markdown.text(info.study_title)}”. "
               f"You rated {rated} items.")
    page_focus(f"Thank you! You have finished your part of “{info.study_title}”. You rated {rated} items.")
    if rated < (planned := assignment.planned_count(info.annotator_id)):
        st.info(f"Your part ended after {rated} of the {planned} items planned for you: the other "
                "annotators have already given every remaining item all the ratings it needs, so "
                "none was left for you. Nothing is missing on your side.")
    finish_codes(info)
    if info.study_status == "open":
        st.button("Back to my last answer", key="back-from-end", on_click=on_back,
                  args=(info.annotator_id, None), shortcut="Backspace")


def finish_codes(info: assignment.AnnotatorSession) -> None:
    """The completion code of the session's outcome (``prolific.outcome``) and the link back."""
    end = prolific.outcome(info.annotator_id)
    if end.code:
        st.markdown("Your completion code:")
        st.code(end.code, language=None, wrap_lines=True)
    if end.url:
        st.link_button("Return to the study platform", end.url, type="primary")


def on_rate(annotator_id: int, assignment_id: int, value, revise: bool = False,
            comment: str | None = None, practice: bool = False, *, seen_ms: int = 0,
            in_view: bool | None = None) -> None:
    """Store an answer for the item it was given for (the server refuses any other, and one
    under the study's seen floor) and keep the next screen for the run that follows; after a
    ``practice`` item, its feedback is shown next."""
    shown = st.session_state.get("shown")
    seconds = time.monotonic() - shown[1] if shown and shown[0] == assignment_id else 0.0
    try:
        screen = assignment.answer(annotator_id, assignment_id, value, seconds, revise=revise,
                                   comment=comment, seen_ms=seen_ms, in_view=in_view)
    except assignment.StaleAnswer:
        st.session_state["flash"] = ("That answer was for an item already answered (perhaps in "
                                     "another tab); it was not stored. Here is your next item.")
        st.session_state["revise_position"] = None
        return
    except InputError as exc:
        st.session_state["flash"] = str(exc)
        return
    except SQLAlchemyError as exc:  # disk full, read-only or unreachable database: say so
        LOG.error("rating not stored (annotator %s, assignment %s): %s", annotator_id,
                  assignment_id, exc)
        st.session_state["flash"] = NOT_SAVED
        return
    st.session_state["revise_position"] = None
    st.session_state[SCREEN_STATE] = screen
    if practice and screen.feedback is not None:
        st.session_state["feedback"] = screen.feedback
        st.query_params[FEEDBACK_PARAM] = str(assignment_id)   # a reload shows it again


SCREEN_STATE = "answered-screen"  # the Screen of the last key press, for the run right after it


def screen_after_press(annotator_id: int) -> assignment.Screen | None:
    """The screen the key press of this run returned (``on_rate``), taken out: only the run
    right after the press uses it."""
    screen = st.session_state.pop(SCREEN_STATE, None)
    return screen if screen is not None and screen.info.annotator_id == annotator_id else None


FEEDBACK_PARAM = "feedback"  # the practice item whose feedback is on screen, kept in the URL


def feedback_on_screen(annotator_id: int) -> assignment.Feedback | None:
    """The practice feedback the page is showing: this session's, or after a reload the one the
    URL names (only the annotator's own practice item, answered)."""
    if (feedback := st.session_state.get("feedback")) is not None:
        return feedback
    shown = st.query_params.get(FEEDBACK_PARAM)
    if shown and shown.isdigit():
        if (feedback := assignment.practice_feedback(annotator_id, int(shown))) is not None:
            st.session_state["feedback"] = feedback
            return feedback
    st.query_params.pop(FEEDBACK_PARAM, None)
    return None


def practice_feedback(feedback: assignment.Feedback, info: assignment.AnnotatorSession) -> None:
    """After a practice item: the answer given, the expected one and why; Enter goes on. The
    focus and the screen reader go to it (``page_focus``)."""
    def say(value: str) -> str:
        return safe_markdown.text(item_screen.in_words(info, feedback.fields, value))

    st.subheader("Practice item")
    (st.success if feedback.correct else st.warning)(
        f"You answered {say(feedback.given)}; the expected answer is {say(feedback.expected)}.")
    if feedback.explanation:
        st.markdown(safe_markdown.markdown(feedback.explanation))
    st.button("Continue", type="primary", shortcut="Enter", key="after-practice",
              on_click=on_feedback_seen)
    page_focus(f"Practice item. You answered {item_screen.in_words(info, feedback.fields, feedback.given)}; "
               f"the expected answer is {item_screen.in_words(info, feedback.fields, feedback.expected)}.")


def on_feedback_seen() -> None:
    st.session_state.pop("feedback", None)
    st.query_params.pop(FEEDBACK_PARAM, None)


def on_back(annotator_id: int, position: int | None) -> None:
    previous = assignment.task_before(annotator_id, position)
    st.session_state["revise_position"] = previous.position if previous else None


def on_continue() -> None:
    st.session_state["revise_position"] = None


def on_bar_action(key: str, annotator_id: int, task: assignment.Task, revising: bool) -> None:
    """A press in the answer bar or mark form of ``task``: ``{item_id, position, kind, value,
    comment, nonce}``, applied to ``item_id`` only (the server refuses it when that is not
    current). The screen on the page may be newer than ``task``: the answer route drew it
    (``answer_route``), so Back goes from the position the press names. A "refresh" (the route
    stored the answer, and the page draws what follows) only runs the page again."""
    action = st.session_state[key]["action"]
    if not action or action.get("nonce") == st.session_state.get("last_nonce"):
        return
    st.session_state["last_nonce"] = action["nonce"]
    if dropped := action.get("not_applied"):
        try:
            assignment.log_keys_not_applied(annotator_id, list(dropped), action.get("item_id"))
        except SQLAlchemyError as exc:  # the count is lost, the answer must not be
            LOG.error("keys_not_applied not logged (annotator %s): %s", annotator_id, exc)
    if action["kind"] == "answer":
        item_id = int(action["item_id"])
        on_task = item_id == task.assignment_id
        on_rate(annotator_id, item_id, action["value"], revise=revising and on_task,
                comment=action.get("comment"), practice=task.phase == "practice" and on_task,
                seen_ms=seen_ms_of(action), in_view=action.get("in_view"))
    elif action["kind"] == "back":
        on_back(annotator_id, position_of(action, task))
    elif action["kind"] == "continue":
        on_continue()


def position_of(action: dict, task: assignment.Task) -> int:
    """The position of the item a press was made on: ``task``'s, or the one the press names
    when it was made on a screen the answer route drew after ``task`` (a press naming no valid
    item or position stays on ``task``'s)."""
    item, position = action.get("item_id"), action.get("position")
    if isinstance(item, int) and isinstance(position, int) and item != task.assignment_id:
        return position
    return task.position


def seen_ms_of(action: dict) -> int:
    """How long the item had been fully drawn when the press came, as the page reports it (0
    when it does not: the server then refuses the answer as under the floor)."""
    try:
        return max(int(float(action.get("seen_ms") or 0)), 0)
    except (TypeError, ValueError):
        return 0


def next_screen(info: assignment.AnnotatorSession,
                pressed: assignment.Screen | None) -> tuple[assignment.Task, int | None] | None:
    """(the next item, the answers given when known) from the key press's screen, else from the
    database; None after drawing the page that replaces it (an error, the end of the sequence)."""
    if pressed is not None:
        task, answered = pressed.task, pressed.answered
    else:
        answered = None
        try:
            task = assignment.next_item(info.annotator_id)
        except InputError as exc:
            st.warning(safe_markdown.text(exc))
            return None
        except SQLAlchemyError as exc:
            LOG.error("next item not loaded (annotator %s): %s", info.annotator_id, exc)
            st.error(st.session_state.pop("flash", None) or NOT_LOADED)
            st.button("Retry", key="retry", type="primary", shortcut="Enter")
            return None
    if task is not None:
        return task, answered
    ended = pressed.info if pressed is not None else assignment.annotator_session(info.annotator_id)
    if ended.routed:   # ended just now
        routed_out(info)
    elif answered if answered is not None else assignment.answered_count(info.annotator_id):
        completion(info)
    else:
        st.info("Every item has enough raters right now, so there is nothing for you to "
                "rate. Thank you for your interest!")
    return None


def rate(info: assignment.AnnotatorSession, pressed: assignment.Screen | None = None) -> None:
    """The item screen: the item revisited, else the next one (``pressed``: the screen the key
    press of this run returned, else read from the database)."""
    revise = st.session_state.get("revise_position")
    if revise is None and (feedback := feedback_on_screen(info.annotator_id)) is not None:
        practice_feedback(feedback, info)
        return
    task = assignment.task_at(info.annotator_id, revise) if revise is not None else None
    answered = None
    if task is None:
        st.session_state["revise_position"] = None
        found = next_screen(info, pressed)
        if found is None:
            return
        task, answered = found
    if st.session_state.get("shown", (None,))[0] != task.assignment_id:
        st.session_state["shown"] = (task.assignment_id, time.monotonic())
    study_type = get_type(info.study_type)
    instructions_slot = st.container()  # filled last: the item screen is sent first
    if answered is None:
        answered = assignment.answered_count(info.annotator_id)
    flash = st.session_state.pop("flash", None)
    seen_nonce = st.session_state.get("last_nonce")
    on_action = partial(on_bar_action, SCREEN_KEY, info.annotator_id, task, task.response is not None)
    if study_type.custom_response:  # the type draws its own answer form (e.g. CrossHOI curation)
        screen = item_screen.item_screen(info, task, answered, flash)
        screen.pop("current")
        cant = task.response == CANT_JUDGE
        view_of(study_type).response_form(
            task.fields, None if cant else task.response, cant_judge_chosen=cant, key=SCREEN_KEY,
            on_action=on_action, **item_screen.mount_options(info, task, screen, seen_nonce))
    else:
        answer_bar(key=SCREEN_KEY, on_action=on_action,
                   data=item_screen.bar_data(info, task, answered, seen_nonce=seen_nonce, flash=flash,
                                             route=answer_route.route_for(info, task)))
    instructions_reminder(instructions_slot, info)


SCREEN_KEY = "item-screen"  # one key for every item: the old screen stays until the new one is drawn


def instructions_reminder(slot, info: assignment.AnnotatorSession) -> None:
    """The instructions above the item, collapsed: their text is sent only while the expander is
    open (opening it runs the page again), not with every item."""
    with slot.expander("Instructions", key="instructions-open", on_change="rerun") as reminder:
        if reminder.open:
            st.markdown(safe_markdown.markdown(info.spec.instructions))


def main() -> None:
    annotator_id = identify()
    if annotator_id is None:
        return
    pressed = screen_after_press(annotator_id)
    info = pressed.info if pressed is not None else assignment.annotator_session(annotator_id)
    if info.prolific_status in prolific.ENDED:
        st.info(prolific.ended_message(info.prolific_status))
    elif info.comprehension_failures >= prolific.ATTEMPTS:
        screened_out(info)
    elif info.routed and st.session_state.get("revise_position") is None:
        routed_out(info)
    elif info.completed and st.session_state.get("revise_position") is None:
        completion(info)
    elif info.study_status == "paused":
        st.warning("This study is paused. Your answers so far are saved; please come back later.")
    elif info.study_status == "closed":
        st.warning("This study is closed. Thank you for your interest.")
    elif not info.started:
        instructions(info)
    else:
        rate(info, pressed)


main()
