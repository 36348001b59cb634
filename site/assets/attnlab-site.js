// The course website's own script (site/conf.py: html_js_files).

// ipywidgets 8 draws a slider's handle as noUiSlider's <div role="slider"> without an accessible name, so a
// screen reader announces only "slider" (WCAG 4.1.2; axe-core rule aria-input-field-name). The handle is
// named after the slider's visible label (the widget's description), as soon as the widget is drawn.
(function () {
  "use strict";
  function nameHandles(root) {
    root.querySelectorAll('.noUi-handle[role="slider"]:not([aria-label])').forEach(function (handle) {
      var widget = handle.closest(".widget-slider, .jupyter-widget-slider, .widget-hslider, .widget-vslider, .widget-inline-hbox");
      var label = widget && widget.querySelector(".widget-label");
      var text = label && label.textContent.trim();
      if (text) { handle.setAttribute("aria-label", text); }
    });
  }
  // The theme's navigation folds a section's pages under <summary> holding only a chevron icon: name it
  // after the section it folds (WCAG 4.1.2; axe-core rule summary-name).
  function nameSummaries(root) {
    root.querySelectorAll("li.has-children > details > summary:not([aria-label])").forEach(function (summary) {
      var link = summary.parentElement.parentElement.querySelector(":scope > a");
      var text = link && link.textContent.trim();
      summary.setAttribute("aria-label", text ? "Show or hide the pages under " + text : "Show or hide the pages below");
    });
  }
  // An output that scrolls (a long log, a wide table) can be reached and scrolled with the keyboard
  // (WCAG 2.1.1; axe-core rule scrollable-region-focusable).
  function focusScrollers(root) {
    root.querySelectorAll(".cell_output pre:not([tabindex]), .jp-RenderedText > pre:not([tabindex])").forEach(function (pre) {
      if (pre.scrollWidth > pre.clientWidth || pre.scrollHeight > pre.clientHeight) {
        pre.setAttribute("tabindex", "0");
        pre.setAttribute("role", "region");
        pre.setAttribute("aria-label", "output (scrollable)");
      }
    });
  }
  function fix() { nameHandles(document); nameSummaries(document); focusScrollers(document); }
  new MutationObserver(fix)
    .observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", fix);
  window.addEventListener("load", fix);
})();

// The widget manager typesets a widget's math with MathJax 2's call MathJax.Hub.Queue(["Typeset", ...]); the
// site loads MathJax 3 (vendor/mathjax), which has no Hub. When MathJax 3 installs itself (it replaces
// window.MathJax), a Hub is added whose Queue runs MathJax 3's typesetPromise on the same element.
(function () {
  "use strict";
  function addHub(mj) {
    if (!mj || typeof mj !== "object" || mj.Hub) { return; }
    var noop = function () {};
    mj.Hub = {
      Queue: function () {
        Array.prototype.forEach.call(arguments, function (job) {
          if (typeof job === "function") { job(); return; }
          if (!Array.isArray(job) || job[0] !== "Typeset") { return; }
          var element = job[2];
          var ready = mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
          ready.then(function () {
            return mj.typesetPromise ? mj.typesetPromise(element ? [element] : undefined) : null;
          }).catch(function (err) { console.warn("MathJax typeset failed", err); });
        });
      },
      Config: noop,
      Configured: noop,
      Register: { StartupHook: noop, MessageHook: noop }
    };
  }
  var current = window.MathJax;
  addHub(current);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = value; if (value && value.version) { addHub(value); } }
  });
})();
