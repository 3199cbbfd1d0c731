// highlight.js ships types for its main entry and languages but not for the `lib/core` subpath,
// which is the one that avoids bundling all ~190 grammars.
declare module "highlight.js/lib/core" {
  import type { HLJSApi } from "highlight.js";
  const hljs: HLJSApi;
  export default hljs;
}
