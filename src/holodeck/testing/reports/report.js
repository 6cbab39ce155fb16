(function () {
  "use strict";
  var cases = Array.prototype.slice.call(document.querySelectorAll("details.case"));
  var filterButtons = Array.prototype.slice.call(document.querySelectorAll(".filter"));
  var search = document.getElementById("search");
  var noMatch = document.getElementById("no-match");
  var current = "all";

  function matches(el) {
    if (current === "failed" && el.dataset.status === "pass") return false;
    if (current === "flaky" && el.dataset.flaky !== "yes") return false;
    var query = search.value.trim().toLowerCase();
    return !query || el.dataset.name.indexOf(query) !== -1;
  }

  function apply() {
    var shown = 0;
    cases.forEach(function (el) {
      var visible = matches(el);
      el.hidden = !visible;
      if (visible) shown += 1;
    });
    noMatch.hidden = shown !== 0;
  }

  filterButtons.forEach(function (button) {
    button.addEventListener("click", function () {
      current = button.dataset.filter;
      filterButtons.forEach(function (other) {
        var on = other === button;
        other.classList.toggle("active", on);
        other.setAttribute("aria-pressed", on ? "true" : "false");
      });
      apply();
    });
  });
  search.addEventListener("input", apply);

  function setAll(open) {
    cases.forEach(function (el) { if (!el.hidden) el.open = open; });
  }
  document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });

  document.querySelectorAll(".tabs").forEach(function (tabs) {
    var buttons = Array.prototype.slice.call(tabs.querySelectorAll(".tab"));
    var panels = Array.prototype.slice.call(tabs.parentNode.querySelectorAll(":scope > .attempt"));
    buttons.forEach(function (button, index) {
      button.addEventListener("click", function () {
        buttons.forEach(function (other, j) {
          other.classList.toggle("active", j === index);
          other.setAttribute("aria-selected", j === index ? "true" : "false");
          panels[j].hidden = j !== index;
        });
      });
    });
  });

  // Open the case named in the address (#case-3), e.g. from a CI link.
  if (location.hash) {
    var target = document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS") target.open = true;
  }
})();
