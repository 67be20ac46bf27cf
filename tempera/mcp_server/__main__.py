"""`python -m tempera.mcp_server`: the same start as the `tempera-mcp` script."""

from tempera.mcp_server.warmstart import main

main()
