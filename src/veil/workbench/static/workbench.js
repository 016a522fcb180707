// The workbench's one script: it follows a run's progress. Everything else works without it.
(function () {
  "use strict";
  function follow(box) {
    var url = box.getAttribute("data-status-url");
    var bar = box.querySelector("progress");
    var stage = box.querySelector(".run-stage");
    function tick() {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s) { setTimeout(tick, 1000); return; }
          if (bar) {
            if (s.total > 0) { bar.max = s.total; bar.value = s.done; } else { bar.removeAttribute("value"); }
          }
          if (stage) { stage.textContent = s.stage + (s.total > 0 ? " (" + s.done + " of " + s.total + ")" : ""); }
          if (s.state === "running") { setTimeout(tick, 400); } else { window.location.reload(); }
        })
        .catch(function () { setTimeout(tick, 1000); });
    }
    tick();
  }
  document.querySelectorAll("[data-status-url]").forEach(follow);
})();
