"""The local memory browser: `tempera ui` serves it on 127.0.0.1 only, behind a per-launch token.

Every asset ships in this package (no CDN, and the CSP allows no other source): `static/chart.umd.js` is Chart.js
4.6.1's UMD build from the npm package `chart.js` (its trailing sourceMappingURL comment removed), under the MIT
license in `static/chart.umd.js.LICENSE.md`.
"""

from tempera.core.errors import MissingExtra
from tempera.core.extras import missing_extra

# `tempera ui` imports this package only when run: without the `ui` extra it ends in the install hint, not a traceback
if hint := missing_extra("ui"):
    raise MissingExtra(f"`tempera ui` cannot start: {hint}")
