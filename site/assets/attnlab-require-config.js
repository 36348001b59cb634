// Loaded before requirejs on every page (site/_ext/attnlab_site.py, priority 400): requirejs reads a global
// "require" object as its configuration. The widget manager (vendor/jupyter-widgets/embed-amd.js) finds its
// icon fonts next to the path requirejs gives its modules "@jupyter-widgets/..." (by default the page's own
// folder): point that at _static/jupyter-widgets.
(function () {
  "use strict";
  var me = document.currentScript && document.currentScript.src;
  if (me && typeof window.require === "undefined") {
    window.require = { paths: { "@jupyter-widgets": me.replace(/attnlab-require-config\.js.*$/, "jupyter-widgets") } };
  }
})();
