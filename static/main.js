// ConvScope page: the module index.html loads. The page is put together in js/app/ (see
// docs/page.md, "How the page is built"): one store, input and effects that dispatch,
// one redraw per frame.

import { start } from "./js/app/boot.js";

start();
