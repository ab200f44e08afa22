// A page that replaces the item screen (practice feedback, the end pages): the focus goes to its
// first heading and the live region says the page (`data.text`) in place of what it said last.
import { announce } from "./live.js";

export default function ({ data }) {
  announce("");
  let tries = 0;
  const focus = () => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    const heading = main.querySelector("h1, h2, h3");
    if (!heading && tries++ < 20) {
      setTimeout(focus, 50);
      return;
    }
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
    announce(data.text);
  };
  setTimeout(focus, 0);
}
