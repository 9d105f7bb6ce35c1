// Injected into a copy of a gpufleet HTML report by tests/report/browser.sh (never into the
// report itself, which carries no script): measures what the browser laid out and appends the
// verdict as JSON in <pre id="gpufleet-layout-check">. A problem is two text elements of one
// chart that overlap, a text element that sticks out of its SVG, or the page scrolling sideways
// outside a table's or a <pre>'s own scroll box.
(function () {
  const width = window.innerWidth;
  const problems = [];
  let texts = 0;
  const svgs = Array.from(document.querySelectorAll('svg'));
  svgs.forEach(function (svg, k) {
    const frame = svg.getBoundingClientRect();
    const name = svg.getAttribute('aria-label') || 'chart ' + (k + 1);
    const boxes = Array.from(svg.querySelectorAll('text'))
      .filter(function (t) { return t.textContent.trim() !== ''; })
      .map(function (t) { return { text: t.textContent, r: t.getBoundingClientRect() }; });
    texts += boxes.length;
    boxes.forEach(function (b) {
      if (b.r.left < frame.left - 0.5 || b.r.right > frame.right + 0.5 ||
          b.r.top < frame.top - 0.5 || b.r.bottom > frame.bottom + 0.5) {
        problems.push('clipped: "' + b.text + '" sticks out of "' + name + '"');
      }
    });
    for (let i = 0; i < boxes.length; ++i) {
      for (let j = i + 1; j < boxes.length; ++j) {
        const a = boxes[i].r, c = boxes[j].r;
        // Glyph boxes include the font's ascent and descent: allow them to touch by a pixel.
        const w = Math.min(a.right, c.right) - Math.max(a.left, c.left);
        const h = Math.min(a.bottom, c.bottom) - Math.max(a.top, c.top);
        if (w > 1 && h > 1) {
          problems.push('overlap: "' + boxes[i].text + '" and "' + boxes[j].text + '" in "' +
                        name + '"');
        }
      }
    }
  });
  if (document.documentElement.scrollWidth > width + 1) {
    const out = Array.from(document.body.querySelectorAll('*'))
      .filter(function (e) {
        return !e.closest('.table-wrap') && !e.closest('pre') &&
               e.getBoundingClientRect().right > width + 1;
      })
      .slice(0, 5)
      .map(function (e) { return e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''); });
    problems.push('the page scrolls sideways at ' + width + ' px (' +
                  document.documentElement.scrollWidth + ' px wide): ' + out.join(', '));
  }
  const pre = document.createElement('pre');
  pre.id = 'gpufleet-layout-check';
  pre.textContent = JSON.stringify({ width: width, charts: svgs.length, texts: texts,
                                     problems: problems });
  document.body.appendChild(pre);
})();
