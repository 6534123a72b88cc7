// A <select data-autosubmit> sends its form when it changes (no inline handlers: the Content-Security-Policy
// allows scripts from this site's files only).
document.addEventListener("change", function (event) {
  var field = event.target;
  if (field.matches && field.matches("select[data-autosubmit]") && field.form) {
    field.form.submit();
  }
});
