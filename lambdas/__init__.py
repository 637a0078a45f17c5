"""Function sources, a package each; `watchdog_core` is shared by the two idle watchdogs, whose
archives ship this folder with both packages (components/function_source.py)."""
