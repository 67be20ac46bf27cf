"""From a hook payload to the text injected into Claude Code, in the daemon (the only answerer).

payload.py parses what Claude Code sends; gate.py decides whether a call is acted on (kill switch, pause, capture
or answer) and shapes the output; warm.py answers: hybrid candidates through the calibrated gate, the brief and the
facts; context.py assembles them, rendered by render.py under one budget and logged by injectlog.py, every episode
as one typed hit (hits.py).
"""
