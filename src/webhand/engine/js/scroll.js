// Scrolls the window; where it is and the page's size.
// engine/page_scripts.py: SCROLL.
([x, y]) => { window.scrollBy(x, y); const e = document.scrollingElement || document.documentElement;
  return [Math.round(window.scrollX), Math.round(window.scrollY), e.scrollWidth, e.scrollHeight]; }
