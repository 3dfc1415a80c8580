"""Static analysis: parse, gather facts about names/devices/loops once, run the rules."""
