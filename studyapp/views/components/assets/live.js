// The page's live region (outside the screens that replace each other), shared by the item
// screens and the pages after them (imported by common.js and page_focus.js): a screen reader
// hears each new item, its progress and content, and each new page.
export function announce(text) {
  let live = document.getElementById("studyapp-live");
  if (!live) {
    live = document.createElement("div");
    live.id = "studyapp-live";
    live.className = "sr-only";
    live.setAttribute("aria-live", "polite");
    live.setAttribute("aria-atomic", "true");
    document.body.appendChild(live);
  }
  live.textContent = text.replace(/\s+/g, " ").trim().slice(0, 600);
}
