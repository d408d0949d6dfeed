(function () {
  "use strict";
  var form = document.getElementById("controls"), box = document.getElementById("groups");
  if (!form || !box) return;
  form.hidden = false;
  var items = Array.prototype.slice.call(box.querySelectorAll("li"));
  function group(key, lis) {
    var d = document.createElement("details"), s = document.createElement("summary"), c = document.createElement("code"),
        n = document.createElement("span"), ul = document.createElement("ul");
    d.className = "group"; c.textContent = key; n.className = "count"; n.textContent = String(lis.length);
    ul.className = "entries";
    lis.forEach(function (li) { ul.appendChild(li); });
    s.appendChild(c); s.appendChild(document.createTextNode(" ")); s.appendChild(n);
    d.appendChild(s); d.appendChild(ul);
    return d;
  }
  function draw() {
    var show = form.querySelector("input[name=show]:checked").value, release = document.getElementById("release");
    var at = release && release.value !== "" ? +release.value : -1;
    var by = document.getElementById("group-by").value, sort = document.getElementById("sort-by").value;
    var groups = new Map();
    items.forEach(function (li) {
      if (show !== "all" && li.getAttribute("data-s") !== show) return;
      // the release filter: rows whose releases (data-v, "first-last") hold the one chosen
      var span = at >= 0 ? li.getAttribute("data-v") : null;
      if (span && (at < +span.split("-")[0] || at > +span.split("-")[1])) return;
      var key = li.getAttribute("data-" + by);
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(li);
    });
    var keys = Array.from(groups.keys()).sort(function (a, b) {
      if (sort === "count" && groups.get(a).length !== groups.get(b).length) return groups.get(b).length - groups.get(a).length;
      return a < b ? -1 : a > b ? 1 : 0;
    });
    var frag = document.createDocumentFragment();
    keys.forEach(function (k) { frag.appendChild(group(k, groups.get(k))); });
    box.textContent = "";
    box.appendChild(frag);
  }
  form.addEventListener("change", draw);
  // A count's link on this page (?by=k&open=raise#browse): the list grouped so, that group open.
  var params = new URLSearchParams(window.location.search), by = params.get("by"), open = params.get("open");
  var select = document.getElementById("group-by");
  if (by && Array.prototype.some.call(select.options, function (o) { return o.value === by; })) {
    select.value = by;
    draw();
    if (open !== null) Array.prototype.forEach.call(box.querySelectorAll("details.group"), function (d) {
      if (d.querySelector("summary code").textContent === open) { d.open = true; d.scrollIntoView(); }
    });
  }
})();
