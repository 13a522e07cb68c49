// The API reference page: Swagger UI (vendored, swagger-ui-bundle.js) on
// the description named by #api-docs's data-spec-url. A file of its own,
// not an inline script, so the site's Content-Security-Policy holds.
(function () {
  "use strict";
  function start() {
    var root = document.getElementById("api-docs");
    if (!root || typeof window.SwaggerUIBundle !== "function") {
      return;
    }
    window.SwaggerUIBundle({
      url: root.getAttribute("data-spec-url"),
      domNode: root,
      deepLinking: true,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      validatorUrl: null,
      tryItOutEnabled: false,
      persistAuthorization: false,
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
