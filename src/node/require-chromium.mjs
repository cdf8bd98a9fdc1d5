// Fails `npm test` with one line when no Chromium is installed, instead of skipping browser tests.
import { chromiumPath } from "./chromium.mjs";

if (!chromiumPath()) {
  console.error(
    "No Chromium found for the browser tests: install it with `apt-get install -y chromium` (Debian) or set CHROMIUM_PATH to a Chromium binary.",
  );
  process.exit(1);
}
