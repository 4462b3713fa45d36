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

/** The stage as drawn, scrolled-away parts included, on a new canvas at `scale`. */
export function paintStage(stage, scale = 1) {
  const origin = stage.getBoundingClientRect();
  const width = Math.ceil(stage.scrollWidth);
  const height = Math.ceil(stage.scrollHeight);
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
  const text = (node, align = "left") => {
    const r = node.getBoundingClientRect();
    const st = getComputedStyle(node);
    ctx.font = fontOf(st);
    ctx.fillStyle = st.color;
    ctx.textAlign = align;
    const x = align === "center" ? r.left + r.width / 2 : r.left;
    // (what the page shows of it: hidden parts left out, cut where the page cuts it)
    ctx.save();
    ctx.beginPath();
    ctx.rect(r.left + dx, r.top + dy, r.width, r.height);
    ctx.clip();
    ctx.fillText(node.innerText, x + dx, r.top + r.height / 2 + dy);
    ctx.restore();
  };
  for (const node of stage.querySelectorAll(".tname, .tdesc, .slice-label, .note")) if (node.offsetParent) text(node);
  for (const fig of stage.querySelectorAll(".tensor.reading, .tensor.writing")) {
    const r = fig.getBoundingClientRect();
    const st = getComputedStyle(fig);
    ctx.strokeStyle = st.borderTopColor;
    ctx.lineWidth = 2;
    ctx.strokeRect(r.left + dx + 1, r.top + dy + 1, r.width - 2, r.height - 2);
  }
  // (a column that scrolls on its own shows only its part: what is scrolled away in it
  // is left out, as on screen; folded figures have no cells on show)
  const clips = new Map();
  const clipOf = (cell) => {
    const col = cell.closest(".flow-col");
    if (!col || col.scrollHeight <= col.clientHeight + 1) return null;
    if (!clips.has(col)) clips.set(col, col.getBoundingClientRect());
    return clips.get(col);
  };
  for (const cell of stage.querySelectorAll(".cell")) {
    const r = cell.getBoundingClientRect();
    if (!r.width) continue;
    const clip = clipOf(cell);
    if (clip && (r.bottom < clip.top || r.top > clip.bottom)) continue;
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
      ctx.fillText(cell.textContent, x + r.width / 2, y + r.height / 2);
    }
  }
  for (const box of stage.querySelectorAll(".box-outline")) {
    const r = box.getBoundingClientRect();
    const st = getComputedStyle(box);
    ctx.strokeStyle = st.borderTopColor;
    ctx.lineWidth = parseFloat(st.borderTopWidth) || 3;
    ctx.strokeRect(r.left + dx + 1.5, r.top + dy + 1.5, r.width - 3, r.height - 3);
  }
  return canvas;
}
