"""The local memory browser: `tempera ui` serves it on 127.0.0.1 only, behind a per-launch token.

Every asset ships in this package (no CDN, and the CSP allows no other source): `static/chart.umd.js` is Chart.js
4.6.1's UMD build from the npm package `chart.js` (its trailing sourceMappingURL comment removed), under the MIT
license in `static/chart.umd.js.LICENSE.md`.
"""
