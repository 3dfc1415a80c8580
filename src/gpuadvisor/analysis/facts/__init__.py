"""Facts computed once per module (imports, values and devices, loops, shapes, calls, summaries), read by every rule."""
