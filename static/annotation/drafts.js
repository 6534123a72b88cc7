/* Drafts of the item page (CausalQA Studio): what the annotator ticks and types is kept on the server
 * (per assignment, annotation.drafts) a moment after each change, and put back when the page is loaded
 * again. Leaving the page with a change not yet kept asks first. No dependencies.
 */
(function () {
  "use strict";

  var DELAY = 700;

  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function collect(form) {
    var data = { ratings: {} };
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.name === "csrfmiddlewaretoken" || field.name === "version") return;
      if ((field.type === "radio" || field.type === "checkbox") && !field.checked) return;
      if (field.name.indexOf("rating_") === 0) data.ratings[field.name.slice(7)] = field.value;
      else data[field.name] = field.value;
    });
    return data;
  }

  function restore(form, data) {
    var last = null;
    function choose(name, value) {
      var input = form.querySelector('input[name="' + name + '"][value="' + String(value).replace(/"/g, '\\"') + '"]');
      if (input) {
        input.checked = true;
        last = input;
      }
    }
    Object.keys(data.ratings || {}).forEach(function (key) { choose("rating_" + key, data.ratings[key]); });
    if (data.vote) choose("vote", data.vote);
    if (data.causal_class) choose("causal_class", data.causal_class);
    ["comment", "answer"].forEach(function (name) {
      var box = form.querySelector('textarea[name="' + name + '"]');
      if (box && typeof data[name] === "string" && data[name]) box.value = data[name];
    });
    // Let the keyboard highlight move past what is already rated.
    if (last) last.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function watch(form) {
    var url = form.getAttribute("data-draft-url");
    if (!url) return;
    var saved = form.getAttribute("data-draft");
    if (saved) {
      try { restore(form, JSON.parse(saved)); } catch (error) { /* a damaged draft is ignored */ }
    }
    var dirty = false, submitting = false, timer = null;

    function save() {
      timer = null;
      if (submitting) return;  // the submit carries everything; a late draft would only be refused
      var body = JSON.stringify(collect(form));
      fetch(url, {
        method: "POST", body: body, credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(form) },
      }).then(function (response) {
        if (response.ok) dirty = false;
        form.dispatchEvent(new CustomEvent("draft:saved", { bubbles: true, detail: { ok: response.ok } }));
      }).catch(function () { /* kept dirty: leaving still asks */ });
    }

    function changed() {
      dirty = true;
      if (timer) clearTimeout(timer);
      timer = setTimeout(save, DELAY);
    }

    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", function () {
      submitting = true;
      if (timer) { clearTimeout(timer); timer = null; }
    });
    window.addEventListener("beforeunload", function (event) {
      if (!dirty || submitting) return;
      event.preventDefault();
      event.returnValue = "";
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    ["judgment-form", "answer-form"].forEach(function (id) {
      var form = document.getElementById(id);
      if (form) watch(form);
    });
  });
})();
