"""The dream cycle: verify_advance -> decay -> reflect -> patterns -> contradict -> templates under one USD budget,
run by `tempera learn dream` or by the daemon when memory has been quiet for a while (see scheduler.py).

    run_cycle(mem, max_usd=None, phases=None, trigger="manual") -> CycleReport
    plan_cycle(mem, max_usd=None, phases=None) -> CycleReport      (dry run: no call, no write)
    last_cycle(db) -> dict | None                                    (what `tempera status` shows)
"""

from tempera.dream.cycle import CycleBusy, CycleReport, last_cycle, plan_cycle, run_cycle

__all__ = ["CycleBusy", "CycleReport", "last_cycle", "plan_cycle", "run_cycle"]
