/* The items page: choose every item on the page at once, then, if more match, all of them.
 *
 * Without scripts the page still works: each row has its box and the bulk bar's "all N items that match"
 * choice. The box in the table's header checks the page's rows; once they are all checked, a line offers
 * to take every matching item instead (it sets that choice). The bar counts the boxes checked.
 */
(function () {
  "use strict";

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("input[name=item][form=bulk]"));
  }

  function refresh() {
    var page = document.getElementById("choose-page");
    var boxes = rows();
    var checked = boxes.filter(function (box) { return box.checked; }).length;
    var count = document.getElementById("checked-count");
    if (count) count.textContent = String(checked);
    if (page) {
      page.checked = boxes.length > 0 && checked === boxes.length;
      page.indeterminate = checked > 0 && checked < boxes.length;
    }
    var all = document.getElementById("choose-all");
    if (all) all.hidden = !(boxes.length > 0 && checked === boxes.length);
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.id === "choose-page") {
      rows().forEach(function (box) { box.checked = target.checked; });
      var selected = document.querySelector("input[name=scope][value=selected]");
      if (selected && target.checked) selected.checked = true;
    }
    if (target.id === "choose-page" || target.name === "item") refresh();
  });

  document.addEventListener("click", function (event) {
    if (event.target.id !== "choose-all-matching") return;
    var scope = document.getElementById("scope-filter");
    if (!scope) return;
    scope.checked = true;
    scope.focus();
  });

  document.addEventListener("DOMContentLoaded", refresh);
})();
