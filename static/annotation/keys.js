/* Keyboard shortcuts of the item page (CausalQA Studio). No dependencies.
 *
 *   0–9        rate the highlighted criterion (the key each value shows; 0 is 10 on a 1–10 scale), then move on;
 *              the numeric keypad too
 *   a / r / n  vote accept / reject / needs revision
 *   Shift+1–9  choose the causal class
 *   c          write a comment;  Esc leaves a text box
 *   Enter      submit (Ctrl+Enter inside a text box)
 *   w          write the answer (the answer box takes focus);  s  skip, with the reason box focused
 *   h          show or hide the guidelines;  ?  list these keys (only the keys this item's design has)
 *   [ / ]      previous / next item of your own work (answers, judgments, skips), as far back as you like
 *   o          open "Change this judgment" (a submitted item whose round is open): the keys above then change it
 *   u          undo a skip (on a skipped question);  Alt+S  skip from inside the answer box
 *   e          edit the focused part (question, context, answer, options); Ctrl+Enter saves it, Esc leaves
 *              the box; focus stays in the edit box after the swap and comes back to the part after saving
 * Curator review page:
 *   a / r / v  decide approve / reject / revise (revise focuses the note);  Enter  decide
 *   j / k      next / previous item of the review queue
 *
 * Where keys go (so that typing never reaches text it was not meant for):
 *   - in a text box, only Ctrl+Enter (submit the box's own form) and Esc (leave the box) act;
 *   - while an edit of a part is open, no single key acts anywhere on the page;
 *   - on a choice (a rating, the vote, the class, a decision), single keys act on that choice only;
 *   - `e` edits the part that has the focus, never another one.
 * After the server refused a form, the focus starts on the first field in error and the errors are read out.
 *
 * A person can turn single-key shortcuts off (WCAG 2.1.4): <body data-shortcuts="off">. Ctrl+Enter stays.
 */
(function () {
  "use strict";

  function isTextBox(element) {
    if (!element || element === document.body) return false;
    if (element.isContentEditable) return true;
    if (element.tagName === "TEXTAREA" || element.tagName === "SELECT") return true;
    return element.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(element.type);
  }

  function criteria(form) {
    return form ? Array.prototype.slice.call(form.querySelectorAll("fieldset.criterion")) : [];
  }

  var current = 0;

  function highlight(form) {
    criteria(form).forEach(function (fieldset, index) {
      fieldset.classList.toggle("current", index === current);
    });
  }

  function firstUnrated(form) {
    var list = criteria(form);
    for (var i = 0; i < list.length; i++) {
      if (!list[i].querySelector("input:checked")) return i;
    }
    return Math.max(list.length - 1, 0);
  }

  function check(input) {
    if (!input) return false;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  function rate(form, digit) {
    var fieldset = criteria(form)[current];
    if (!fieldset) return;
    // Checking fires "change", whose listener below moves the highlight to the next criterion.
    check(fieldset.querySelector('input[type=radio][data-key="' + digit + '"]'));
  }

  function submit(form) {
    if (!form) return;
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
  }

  function toggleGuidelines() {
    var panel = document.getElementById("guidelines");
    if (!panel) return;
    panel.open = !panel.open;
    if (panel.open) panel.scrollIntoView({ block: "nearest" });
  }

  function toggleShortcuts() {
    var help = document.getElementById("shortcuts");
    if (help) help.hidden = !help.hidden;
  }

  function partOf(element) {
    return element && element.closest ? element.closest(".part[id^='part-']") : null;
  }

  // Focus follows an in-place edit: into the edit box when it arrives, back to the part after saving.
  var swappedPart = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var part = partOf(event.detail.elt);
    swappedPart = part ? part.id : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!swappedPart) return;
    var part = document.getElementById(swappedPart);
    swappedPart = null;
    if (!part) return;
    var box = part.tagName === "FORM" && part.querySelector("textarea, select, input:not([type=hidden])");
    if (box) box.focus();
    else part.focus();
  });

  function decide(form, value) {
    var choice = form && form.querySelector('input[name="decision"][value="' + value + '"]');
    if (!check(choice)) return false;
    if (value === "revise") form.querySelector("textarea[name=note]").focus();
    return true;
  }

  function follow(key) {
    var link = document.querySelector('a[data-key="' + key + '"]');
    if (!link) return false;
    link.click();
    return true;
  }

  // The form the judging keys act on: the judgment form, or "Change this judgment" once it is open.
  function judgingForm() {
    var form = document.getElementById("judgment-form");
    if (form) return form;
    var change = document.getElementById("judgment-change-form");
    var details = change && change.closest("details");
    return change && (!details || details.open) ? change : null;
  }

  function openChange() {
    var change = document.getElementById("judgment-change-form");
    var details = change && change.closest("details");
    if (!details) return false;
    details.open = true;
    current = 0; // every criterion is rated already: changing starts from the first
    highlight(change);
    details.scrollIntoView({ block: "nearest" });
    return true;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var judgment = document.getElementById("judgment-form") || document.getElementById("judgment-change-form");
    if (judgment) {
      current = firstUnrated(judgment);
      highlight(judgment);
      judgment.addEventListener("change", function (event) {
        var fieldset = event.target.closest("fieldset.criterion");
        if (!fieldset) return;
        var list = criteria(judgment);
        current = Math.min(list.indexOf(fieldset) + 1, list.length - 1);
        highlight(judgment);
      });
    }
    var toggle = document.querySelector("[data-toggle-shortcuts]");
    if (toggle) toggle.addEventListener("click", toggleShortcuts);
  });

  function openSkip() {
    var skip = document.querySelector("details.skip");
    if (!skip) return false;
    skip.open = true;
    var reason = skip.querySelector("input[name=reason]");
    if (reason) reason.focus();
    return true;
  }

  function editOpen() {
    return Boolean(document.querySelector("form.part.editing, form.part.conflict"));
  }

  // The choice (a fieldset of radio buttons) that has the focus, if any: keys then act on it alone.
  function focusedChoice(target) {
    if (!target || target.tagName !== "INPUT" || !/^(radio|checkbox)$/.test(target.type)) return null;
    return target.closest("fieldset") || target.closest(".choices") || target;
  }

  // After the server refused a form: focus the first field in error, and have the errors read out.
  function focusFirstError() {
    var invalid = document.querySelector("[aria-invalid='true']");
    if (!invalid) return;
    if (invalid.type === "radio") {
      var group = invalid.form ? invalid.form.querySelectorAll('input[name="' + invalid.name + '"]') : [invalid];
      var checked = Array.prototype.filter.call(group, function (input) { return input.checked; })[0];
      invalid = checked || group[0];
    }
    var details = invalid.closest("details");
    if (details) details.open = true;
    invalid.focus();
    var summary = document.querySelector("[data-error-summary]");
    if (summary) {
      // A live region is read out when its text changes, not when the page arrives with it.
      var text = summary.textContent;
      summary.textContent = "";
      setTimeout(function () { summary.textContent = text; }, 100);
    }
  }

  document.addEventListener("DOMContentLoaded", focusFirstError);

  function choiceKey(event, choice, judgment, decision, digit) {
    var fieldset = choice.tagName === "FIELDSET" ? choice : null;
    var form = choice.closest("form");
    if (digit && !event.shiftKey && fieldset && fieldset.classList.contains("criterion")) {
      event.preventDefault();
      check(fieldset.querySelector('input[type=radio][data-key="' + digit[1] + '"]'));
      return;
    }
    if (digit && event.shiftKey && fieldset && fieldset.classList.contains("class-label") && digit[1] !== "0") {
      if (check(fieldset.querySelectorAll('input[name="causal_class"]')[Number(digit[1]) - 1])) event.preventDefault();
      return;
    }
    if (fieldset && fieldset.classList.contains("vote") && /^[arn]$/.test(event.key)) {
      if (check(fieldset.querySelector('input[name="vote"][data-key="' + event.key + '"]'))) event.preventDefault();
      return;
    }
    if (form && form === decision && /^[arv]$/.test(event.key)) {
      // On the choice itself the focus stays there (from the page, `v` also moves to the note).
      var value = { a: "approve", r: "reject", v: "revise" }[event.key];
      if (check(decision.querySelector('input[name="decision"][value="' + value + '"]'))) event.preventDefault();
      return;
    }
    if (event.key === "Enter" && form && (form === judgment || form === decision || form.id === "judgment-change-form")) {
      event.preventDefault();
      submit(form);
      return;
    }
    if (event.key === "?" || event.key === "h") {
      event.preventDefault();
      if (event.key === "?") toggleShortcuts();
      else toggleGuidelines();
    }
  }

  document.addEventListener("keydown", function (event) {
    var judgment = judgingForm();
    var answer = document.getElementById("answer-form");
    var decision = document.getElementById("decision-form");
    var target = event.target;

    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = target.closest && target.closest("form");
      if (
        form &&
        (form === judgment || form === answer || form === decision || form.id === "judgment-change-form" ||
          form.id === "skip-form" || form.classList.contains("part"))
      ) {
        event.preventDefault();
        submit(form);
      }
      return;
    }
    // Alt+S skips from inside the answer box, where a plain s is a letter of the answer.
    if (event.altKey && !event.ctrlKey && !event.metaKey && event.code === "KeyS" && answer && answer.contains(target)) {
      if (openSkip()) event.preventDefault();
      return;
    }
    if (isTextBox(target)) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (document.body.getAttribute("data-shortcuts") === "off") return;
    if (editOpen()) return;
    // Keys pressed on a button or a link keep their usual meaning.
    if (event.key === "Enter" && target.closest && target.closest("button, a, summary")) return;

    var digit = /^(?:Digit|Numpad)([0-9])$/.exec(event.code || "");
    var choice = focusedChoice(target);
    if (choice) {
      choiceKey(event, choice, judgment, decision, digit);
      return;
    }
    if (digit && event.shiftKey && judgment && digit[1] !== "0") {
      var classes = judgment.querySelectorAll('input[name="causal_class"]');
      if (check(classes[Number(digit[1]) - 1])) event.preventDefault();
      return;
    }
    if (digit && judgment) {
      event.preventDefault();
      rate(judgment, digit[1]);
      return;
    }
    if (decision && /^[arv]$/.test(event.key)) {
      if (decide(decision, { a: "approve", r: "reject", v: "revise" }[event.key])) event.preventDefault();
      return;
    }
    switch (event.key) {
      case "e":
        // Only the part that has the focus: a key pressed elsewhere never opens an edit box to type into.
        var part = partOf(target);
        var edit = part && part.querySelector(".edit-button");
        if (edit) {
          event.preventDefault();
          edit.click();
        }
        break;
      case "j":
      case "k":
        if (follow(event.key)) event.preventDefault();
        break;
      case "a":
      case "r":
      case "n":
        if (judgment && check(judgment.querySelector('input[name="vote"][data-key="' + event.key + '"]'))) {
          event.preventDefault();
        }
        break;
      case "c":
        var comment = judgment && judgment.querySelector("textarea[name=comment]");
        if (comment) {
          event.preventDefault();
          comment.focus();
        }
        break;
      case "w":
        var box = answer && answer.querySelector("textarea[name=answer]");
        if (box) {
          event.preventDefault();
          if (box.closest("details")) box.closest("details").open = true;
          box.focus();
        }
        break;
      case "s":
        if (openSkip()) event.preventDefault();
        break;
      case "[":
      case "]":
        if (follow(event.key)) event.preventDefault();
        break;
      case "o":
        if (openChange()) event.preventDefault();
        break;
      case "u":
        var unskip = document.getElementById("unskip-form");
        if (unskip) {
          event.preventDefault();
          submit(unskip);
        }
        break;
      case "h":
        event.preventDefault();
        toggleGuidelines();
        break;
      case "?":
        event.preventDefault();
        toggleShortcuts();
        break;
      case "Enter":
        if (judgment || decision) {
          event.preventDefault();
          submit(judgment || decision);
        }
        break;
    }
  });
})();
