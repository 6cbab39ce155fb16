// Bundles @ag-ui/client for a browser page (window.AgUi = the package), into OUT.
//   node bundle_client.mjs OUT
import { build } from "esbuild";

await build({
  stdin: { contents: 'export * from "@ag-ui/client";', resolveDir: import.meta.dirname },
  bundle: true,
  format: "iife",
  globalName: "AgUi",
  platform: "browser",
  outfile: process.argv[2],
  logLevel: "warning",
});
