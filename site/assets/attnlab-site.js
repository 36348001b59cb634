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
  new MutationObserver(function () { nameHandles(document); })
    .observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", function () { nameHandles(document); });
})();
