/* Copy buttons: a button with data-copy="ID" copies the text of the element ID, and the page's #copy-status
 * (a live region) says whether it worked. Where the clipboard is not offered, the text is selected instead. */
(function () {
  "use strict";

  function say(key) {
    var status = document.getElementById("copy-status");
    if (status) status.textContent = status.getAttribute(key) || "";
  }

  function select(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(
        function () { say("data-copied"); },
        function () { select(source); say("data-failed"); }
      );
    } else {
      select(source);
      say("data-failed");
    }
  });
})();
