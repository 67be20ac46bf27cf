"""From a hook payload to the text injected into Claude Code, for both paths.

payload.py parses what Claude Code sends; gate.py decides what a call does (kill switch, pause, capture or
answer) and shapes the output; context.py assembles the answer: candidates, the brief and facts, rendered by
render.py under one budget and logged by injectlog.py, every episode as one typed hit (hits.py). The candidates
come from sqlhits.py (plain SQL: keyword hits) or, in the daemon, from warm.py
(hybrid retrieval, the brief, the facts). Everything but warm.py is standard library only, because the hook
process runs it when the daemon does not answer.
"""
