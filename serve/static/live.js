// live.js: re-reads the page's live part every few seconds while its run
// (or any listed run) is running; the server renders and escapes it.
(function () {
  var box = document.getElementById("live");
  if (!box) { return; }
  var every = Number(box.getAttribute("data-every")) || 3000;
  function ended() { return box.getAttribute("data-live") !== "yes"; }
  function poll() {
    if (ended()) { return; }
    fetch(box.getAttribute("data-src"), {cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error(r.status + " " + r.statusText); }
      return r.text();
    }).then(function (html) {
      var t = document.createElement("template");
      t.innerHTML = html;
      var next = t.content.getElementById("live");
      if (next) {
        box.innerHTML = next.innerHTML;
        box.setAttribute("data-live", next.getAttribute("data-live"));
      }
      var s = document.getElementById("poll-error");
      if (s) { s.textContent = ""; }
    }).catch(function (e) {
      var s = document.getElementById("poll-error");
      if (s) { s.textContent = "update failed: " + e.message + " (retrying)"; }
    }).finally(function () {
      if (!ended()) { setTimeout(poll, every); }
    });
  }
  setTimeout(poll, every);
})();
