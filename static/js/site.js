/* Site-wide behaviour (CausalQA Studio): where focus goes after htmx swaps part of a page.
 *
 * When a swap removes the focused element (a form replaced by its result, an edit box by the saved
 * text), focus would fall back to the page's start. Instead it moves into the new content: to an
 * element marked [autofocus] or [data-focus], else to the first error, else to the first field, button
 * or link, else to the swapped region itself. Swaps from polling and page loads leave focus alone.
 */
(function () {
  "use strict";

  var FOCUSABLE = "input:not([type=hidden]):not([disabled]), textarea:not([disabled]), select:not([disabled]), " +
    "button:not([disabled]), a[href], summary, [tabindex]";

  function lostFocus() {
    var active = document.activeElement;
    return !active || active === document.body || !document.contains(active);
  }

  function pick(region) {
    return region.querySelector("[autofocus], [data-focus]") ||
      region.querySelector(".errorlist, .error, [role=alert]") ||
      region.querySelector(FOCUSABLE) ||
      region;
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var detail = event.detail || {};
    var trigger = (detail.elt && detail.elt.getAttribute && detail.elt.getAttribute("hx-trigger")) || "";
    if (/every|load|revealed|intersect/.test(trigger)) return;
    var region = detail.target || event.target;
    if (!region || !document.contains(region) || !lostFocus()) return;
    var element = pick(region);
    if (!element.matches(FOCUSABLE)) element.setAttribute("tabindex", "-1");
    element.focus();
  });

  // A table wider than the screen scrolls in its own box; a box that scrolls must be reachable by keyboard.
  function scrollBoxesFocusable() {
    var boxes = document.querySelectorAll("table.table, .table-scroll, .card-body table, pre");
    Array.prototype.forEach.call(boxes, function (box) {
      if (box.scrollWidth > box.clientWidth + 1 && !box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
    });
  }
  document.addEventListener("DOMContentLoaded", scrollBoxesFocusable);
  window.addEventListener("resize", scrollBoxesFocusable);
  document.addEventListener("htmx:afterSettle", scrollBoxesFocusable);

  // The skip link lands on <main>; make sure it takes focus in every browser.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.skip-link");
    if (!link) return;
    var main = document.getElementById("main");
    if (main) {
      event.preventDefault();
      main.focus();
      main.scrollIntoView();
    }
  });
})();

/* A form marked data-confirm asks before it is sent (no inline handlers: the Content-Security-Policy allows
 * scripts from this site's files only). */
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form.matches && form.matches("form[data-confirm]") && !window.confirm(form.getAttribute("data-confirm"))) {
    event.preventDefault();
  }
});
