// Export: the trace as a JSON file, and the stage as a PNG painted from the drawn DOM
// (each figure's caption, slice labels, cells with their colours, values and
// highlights), so the picture is exactly what is on screen.

export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function exportJson(doc, filename = "convscope-trace.json") {
  download(new Blob([JSON.stringify(doc)], { type: "application/json" }), filename);
}

function fontOf(style) {
  return `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
}

/**
 * Paint `stage` (the stage element) into a canvas at device scale `scale`; resolves to
 * a PNG Blob. Scrolled-away parts are included.
 */
export async function stagePng(stage, scale = 1) {
  const canvas = paintStage(stage, scale);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}

/** Where the text of `node` (at `r`) may run to: the next slice on its line, else its
 *  figure's inner edge. */
function roomRight(node, r) {
  const fig = node.closest(".tensor");
  if (!fig) return r.right;
  const fr = fig.getBoundingClientRect();
  let right = fr.right - (parseFloat(getComputedStyle(fig).paddingRight) || 0);
  const slice = node.closest(".slice");
  const next = slice && slice.nextElementSibling;
  if (next) {
    const nr = next.getBoundingClientRect();
    if (nr.left > r.left && Math.abs(nr.top - slice.getBoundingClientRect().top) < 2) right = Math.min(right, nr.left - 2);
  }
  return Math.max(r.right, right);
}

/** The first of `texts` that fits `room` px in style `st`'s font, or in a smaller one
 *  (no smaller than 10 px); else the first cut with an ellipsis; null when not
 *  two of its characters fit. {text, font}. */
export function fitText(ctx, texts, st, room) {
  if (!texts.length) return null;
  const size = parseFloat(st.fontSize) || 12;
  const fontAt = (px) => `${st.fontStyle} ${st.fontWeight} ${px}px ${st.fontFamily}`;
  const sizes = [size];
  for (let px = Math.floor(size) - 1; px >= 10; px--) sizes.push(px);
  for (const t of texts) {
    for (const px of sizes) {
      ctx.font = fontAt(px);
      if (ctx.measureText(t).width <= room) return { text: t, font: ctx.font };
    }
  }
  const t = texts[0];
  ctx.font = fontAt(size);
  for (let n = t.length - 1; n >= 2; n--) {
    const cut = `${t.slice(0, n).trimEnd()}…`;
    if (ctx.measureText(cut).width <= room) return { text: cut, font: ctx.font };
  }
  return null;
}

/** The stage as drawn, scrolled-away parts included (or, `shown`, only its box: an
 *  animation's frame, which the stage was laid out for), on a new canvas at `scale`. */
export function paintStage(stage, scale = 1, shown = false) {
  const origin = stage.getBoundingClientRect();
  const width = Math.ceil(shown ? stage.offsetWidth : stage.scrollWidth);
  const height = Math.ceil(shown ? stage.offsetHeight : stage.scrollHeight);
  const dx = -origin.left + stage.scrollLeft;
  const dy = -origin.top + stage.scrollTop;
  const canvas = document.createElement("canvas");
  canvas.width = Math.ceil(width * scale);
  canvas.height = Math.ceil(height * scale);
  const ctx = canvas.getContext("2d");
  ctx.scale(scale, scale);
  const stageStyle = getComputedStyle(stage);
  ctx.fillStyle = stageStyle.backgroundColor;
  ctx.fillRect(0, 0, width, height);
  ctx.textBaseline = "middle";
  // A caption's or a slice label's text, whole: in the room it has up to the figure's edge
  // (or the next slice), in a smaller size if it must, else shorter (a slice label without
  // the tensor's name, which the caption says), else cut with an ellipsis; never a stray
  // piece of a glyph.
  const text = (node) => {
    const r = node.getBoundingClientRect();
    const st = getComputedStyle(node);
    const room = roomRight(node, r) - r.left;
    // (shorter: a slice label without the tensor's name, a caption without the shape)
    const last = node.lastChild;
    const short = node.classList.contains("slice-label") && last && last.nodeType === Node.TEXT_NODE ? last.textContent : node.classList.contains("tdesc") && node.firstChild ? node.firstChild.textContent : null;
    const fit = fitText(ctx, [node.innerText, short].filter(Boolean), st, room);
    if (!fit) return;
    within(node, () => {
      ctx.font = fit.font;
      ctx.fillStyle = st.color;
      ctx.textAlign = "left";
      ctx.fillText(fit.text, r.left + dx, r.top + r.height / 2 + dy);
    });
  };
  // (a column that scrolls on its own shows only its part: what is scrolled away in it
  // is left out, as on screen; folded figures have no cells on show)
  const clips = new Map();
  const clipOf = (node) => {
    const col = node.closest(".flow-col");
    if (!col || col.scrollHeight <= col.clientHeight + 1) return null;
    if (!clips.has(col)) clips.set(col, col.getBoundingClientRect());
    return clips.get(col);
  };
  // paint(): drawn cut at the edge of the column it scrolls in
  const within = (node, paint) => {
    const clip = clipOf(node);
    if (!clip) return paint();
    ctx.save();
    ctx.beginPath();
    ctx.rect(clip.left + dx, clip.top + dy, clip.width, clip.height);
    ctx.clip();
    paint();
    ctx.restore();
  };
  for (const node of stage.querySelectorAll(".tname, .tdesc, .slice-label, .note")) if (node.offsetParent) text(node);
  for (const fig of stage.querySelectorAll(".tensor.reading, .tensor.writing")) {
    const r = fig.getBoundingClientRect();
    const st = getComputedStyle(fig);
    within(fig, () => {
      ctx.strokeStyle = st.borderTopColor;
      ctx.lineWidth = 2;
      ctx.strokeRect(r.left + dx + 1, r.top + dy + 1, r.width - 2, r.height - 2);
    });
  }
  for (const cell of stage.querySelectorAll(".cell")) {
    const r = cell.getBoundingClientRect();
    if (!r.width) continue;
    const clip = clipOf(cell);
    if (clip && (r.bottom < clip.top || r.top > clip.bottom)) continue;
    if (clip && (r.top < clip.top || r.bottom > clip.bottom)) {
      within(cell, () => paintCell(cell, r));
      continue;
    }
    paintCell(cell, r);
  }
  function paintCell(cell, r) {
    const st = getComputedStyle(cell);
    const x = r.left + dx;
    const y = r.top + dy;
    ctx.fillStyle = st.backgroundColor;
    ctx.fillRect(x, y, r.width, r.height);
    if (cell.classList.contains("pad") || cell.classList.contains("gap")) {
      ctx.save(); // (the hatching stays inside its cell, as on screen)
      ctx.beginPath();
      ctx.rect(x, y, r.width, r.height);
      ctx.clip();
      ctx.strokeStyle = "rgba(128,128,128,0.45)";
      ctx.lineWidth = 1;
      for (let k = -r.height; k < r.width; k += 6) {
        ctx.beginPath();
        ctx.moveTo(x + k, y + r.height);
        ctx.lineTo(x + k + r.height, y);
        ctx.stroke();
      }
      ctx.restore();
    }
    const ow = parseFloat(st.outlineWidth) || 0;
    if (st.outlineStyle !== "none" && ow > 0) {
      ctx.strokeStyle = st.outlineColor;
      ctx.lineWidth = ow;
      ctx.setLineDash(st.outlineStyle === "dashed" ? [ow * 2, ow] : []);
      ctx.strokeRect(x + ow / 2, y + ow / 2, r.width - ow, r.height - ow);
      ctx.setLineDash([]);
    }
    if (cell.textContent) {
      ctx.font = fontOf(st);
      ctx.fillStyle = st.color;
      ctx.textAlign = "center";
      // (the number's line box is on top: above the tag in a written figure)
      const line = Math.min(r.height, parseFloat(st.lineHeight) || r.height);
      ctx.fillText(cell.textContent, x + r.width / 2, y + line / 2);
    }
    // what the step added ("+2"), under the number in the lower right corner, as the page draws it
    if (cell.dataset.delta) {
      const tag = getComputedStyle(cell, "::after");
      if (tag.content && tag.content !== "none") {
        ctx.font = fontOf(tag);
        ctx.fillStyle = tag.color;
        ctx.textAlign = "right";
        ctx.textBaseline = "bottom";
        ctx.fillText(cell.dataset.delta, x + r.width - (parseFloat(tag.right) || 2), y + r.height);
        ctx.textBaseline = "middle";
      }
    }
  }
  for (const box of stage.querySelectorAll(".box-outline")) {
    const r = box.getBoundingClientRect();
    const st = getComputedStyle(box);
    within(box, () => {
      ctx.strokeStyle = st.borderTopColor;
      ctx.lineWidth = parseFloat(st.borderTopWidth) || 3;
      ctx.strokeRect(r.left + dx + 1.5, r.top + dy + 1.5, r.width - 3, r.height - 3);
    });
  }
  return canvas;
}
