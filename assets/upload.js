// Dataset upload: drag and drop onto the file field, and a progress bar
// while the file travels. Without this script the form posts as usual.
// What it says comes from the page, in the reader's language: the form's
// data-upload-failed, and numbers in the page's lang.
(function () {
  "use strict";
  function init() {
    var form = document.getElementById("upload-form");
    if (!form || form.dataset.ready) return;
    form.dataset.ready = "1";
    var zone = document.getElementById("dropzone");
    var input = document.getElementById("file-input");
    var text = document.getElementById("dropzone-text");
    var bar = document.getElementById("upload-progress");
    var button = document.getElementById("upload-button");
    var result = document.getElementById("upload-result");

    var lang = document.documentElement.lang || undefined;
    function kib(bytes) {
      var n = Math.round(bytes / 1024);
      try { return new Intl.NumberFormat(lang).format(n); } catch (e) { return String(n); }
    }
    function show(file) { text.textContent = file ? file.name + " (" + kib(file.size) + " KiB)" : text.textContent; }
    input.addEventListener("change", function () { show(input.files[0]); });
    ["dragenter", "dragover"].forEach(function (ev) {
      zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.add("dragging"); });
    });
    ["dragleave", "drop"].forEach(function (ev) {
      zone.addEventListener(ev, function () { zone.classList.remove("dragging"); });
    });
    zone.addEventListener("drop", function (e) {
      e.preventDefault();
      if (e.dataTransfer && e.dataTransfer.files.length) {
        input.files = e.dataTransfer.files;
        show(input.files[0]);
      }
    });

    form.addEventListener("submit", function (e) {
      e.preventDefault();
      if (!input.files.length) { input.reportValidity(); return; }
      var data = new FormData(form); // fields first, the file last (DOM order)
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/datasets");
      xhr.setRequestHeader("HX-Request", "true");
      var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      Object.keys(headers).forEach(function (k) { xhr.setRequestHeader(k, headers[k]); });
      bar.hidden = false; bar.value = 0; button.setAttribute("aria-busy", "true"); button.disabled = true;
      xhr.upload.addEventListener("progress", function (ev) {
        if (ev.lengthComputable) bar.value = Math.round(100 * ev.loaded / ev.total);
      });
      xhr.addEventListener("load", function () {
        var to = xhr.getResponseHeader("HX-Redirect");
        if (to) { window.location.assign(to); return; }
        button.removeAttribute("aria-busy"); button.disabled = false; bar.hidden = true;
        result.innerHTML = xhr.responseText;
      });
      xhr.addEventListener("error", function () {
        button.removeAttribute("aria-busy"); button.disabled = false; bar.hidden = true;
        result.textContent = form.dataset.uploadFailed || "";
      });
      xhr.send(data);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
