// Swagger UI's own initializer (node_modules/swagger-ui-dist/swagger-initializer.js), served in its
// place by tests/corpus_site.py, with one change: the spec is our local petstore.json, fetched by
// the page after load, instead of a document on the internet.
window.onload = function() {
  window.ui = SwaggerUIBundle({
    url: "./petstore.json",
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [
      SwaggerUIBundle.presets.apis,
      SwaggerUIStandalonePreset
    ],
    plugins: [
      SwaggerUIBundle.plugins.DownloadUrl
    ],
    layout: "StandaloneLayout"
  });
};
